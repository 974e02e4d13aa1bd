import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { definePlugin, errorMessage, savedOutputDir, Stage, type Kernel, type Session, type ToolCall, type ToolResult } from '../../kernel/index.js';
import { cutOutput, type Cut, type TruncateOptions } from './truncate.js';

export type MicroCompactOptions = Partial<TruncateOptions>;

const NAME = 'compact-micro';

/** The free per-result tier: cuts a very long tool output to head and tail, keeping the whole on disk. */
export default definePlugin((opts: MicroCompactOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    const limits: TruncateOptions = {
      maxLines: opts.maxLines ?? 2000,
      maxChars: opts.maxChars ?? 60_000,
      headLines: opts.headLines ?? 200,
      tailLines: opts.tailLines ?? 200,
    };
    // Late: summaries (compact-api-micro) and other shapers see the whole output first.
    kernel.hooks.toolResult.tapPromise({ name: NAME, stage: Stage.LATE }, async (result, call, turn) =>
      shrink(kernel, turn.session, call, result, limits),
    );
  },
}));

async function shrink(kernel: Kernel, session: Session, call: ToolCall, result: ToolResult, limits: TruncateOptions): Promise<ToolResult> {
  if (typeof result.content === 'string') {
    const text = await shrinkText(kernel, session, call, result.content, limits, '');
    return text === result.content ? result : { ...result, content: text };
  }
  let changed = false;
  const content = await Promise.all(
    result.content.map(async (block, index) => {
      if (block.type !== 'text') return block;
      const text = await shrinkText(kernel, session, call, block.text, limits, `-${index}`);
      if (text === block.text) return block;
      changed = true;
      return { ...block, text };
    }),
  );
  return changed ? { ...result, content } : result;
}

async function shrinkText(kernel: Kernel, session: Session, call: ToolCall, text: string, limits: TruncateOptions, suffix: string): Promise<string> {
  const cut = cutOutput(text, limits);
  if (!cut) return text;
  const file = path.join(outputDir(kernel, session), `${safeName(call.id)}${suffix}.txt`);
  let where: string;
  try {
    // Tool output may hold secrets: only the user may read it (folders 0700, files 0600, as everywhere in KEEL_HOME).
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    await writeFile(file, text, { mode: 0o600 });
    // Exactly what the tool returned: a tool may have cut its own output before (bash says so in its text).
    where = `This result as the tool returned it (${cut.totalLines} lines) is saved at ${file}: read the omitted part with read_file, path "${file}", offset ${cut.fromLine} and a limit of a few hundred lines at a time.`;
  } catch (err) {
    kernel.log('warn', `could not save the full output of ${call.name} to ${file}: ${errorMessage(err)}`, NAME);
    where = 'This result could not be saved; rerun the command with a narrower scope (grep, head, tail) to see the omitted part.';
  }
  return `${cut.head}${marker(cut, where)}${cut.tail}`;
}

function marker(cut: Cut, where: string): string {
  const lead = cut.head.endsWith('\n') || cut.head === '' ? '' : '\n';
  return `${lead}\n[Output truncated: ${cut.omittedLines} lines omitted (lines ${cut.fromLine} to ${cut.toLine}, ${cut.omittedChars} characters). ${where}]\n\n`;
}

function outputDir(kernel: Kernel, session: Session): string {
  const home = kernel.config.keelHome || path.join(os.tmpdir(), 'keel');
  return savedOutputDir(home, session.id);
}

function safeName(value: string): string {
  return value.replace(/[^A-Za-z0-9_.-]/g, '_');
}
