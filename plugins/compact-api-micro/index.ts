import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { definePlugin, errorMessage, responseText, savedOutputDir, Stage, type Kernel, type ToolCall, type ToolResult, type Turn } from '../../kernel/index.js';
import { SummaryCache, writeAtomic } from './cache.js';

export interface ApiMicroCompactOptions {
  /** Outputs of at least this many characters are summarised (default 100 000, about 25 000 tokens). */
  minChars?: number;
  /** At most this much of the output is sent to the small model, head and tail (default 300 000). */
  maxInputChars?: number;
  /** Output tokens for one summary (default 2 000). */
  summaryTokens?: number;
}

const NAME = 'compact-api-micro';
/** Part of every cache key: a new prompt must not serve summaries written for the old one. */
const PROMPT_VERSION = 'api-micro/1';

const SYSTEM = `You condense one tool output for a coding agent that cannot read all of it.
Write a structured Markdown summary with exactly these sections:
## What it is
## Key facts
## Errors and warnings
## Notable lines
Keep file paths, line numbers, identifiers, counts and error messages exact; quote the lines that matter.
Do not speculate beyond the output. Be concise.`;

/** The cheap per-result tier: very large outputs are summarised by the small model, cached on disk. */
export default definePlugin((opts: ApiMicroCompactOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  dependencies: ['query-service'],
  apply(kernel) {
    const settings = { minChars: opts.minChars ?? 100_000, maxInputChars: opts.maxInputChars ?? 300_000, summaryTokens: opts.summaryTokens ?? 2000 };
    // Early: before compact-micro cuts the output down to head and tail.
    kernel.hooks.toolResult.tapPromise({ name: NAME, stage: Stage.EARLY }, async (result, call, turn) => {
      const text = textOf(result);
      if (text === undefined || text.length < settings.minChars) return result;
      const home = kernel.config.keelHome || path.join(os.tmpdir(), 'keel');
      const cache = new SummaryCache(path.join(home, 'cache', NAME));
      const key = cache.key(text, PROMPT_VERSION);
      let summary = await cache.get(key);
      if (!summary) {
        try {
          summary = await summarise(kernel, turn, call, text, settings);
        } catch (err) {
          // compact-micro (if present) still cuts the output down. An abort (the query service passes the turn signal) is no
          // failure worth a warning: the loop reports it.
          if (!turn.signal.aborted) kernel.log('warn', `could not summarise the ${text.length}-character output of ${call.name}: ${errorMessage(err)}`, NAME);
          return result;
        }
        // A summary paid for is used even when it cannot be kept for next time (a full disk, an unwritable cache).
        try {
          await cache.set(key, summary, call.name);
        } catch (err) {
          kernel.log('warn', `could not cache the summary of ${call.name}'s output in ${cache.dir}: ${errorMessage(err)}`, NAME);
        }
      }
      // The full output goes with the session (the summaries are shared): a session reads its own saved outputs
      // unasked and no other session's, so the raw text of one project's output never serves another.
      const raw = path.join(savedOutputDir(home, turn.session.id), `summarised-${key.slice(0, 32)}.txt`);
      try {
        await mkdir(path.dirname(raw), { recursive: true, mode: 0o700 });
        await writeAtomic(raw, text);
      } catch (err) {
        kernel.log('warn', `could not save the full output of ${call.name} to ${raw}: ${errorMessage(err)}`, NAME);
        return result;
      }
      const lines = text.split('\n').length;
      return {
        ...result,
        content: `[Output summarised: ${lines} lines (${text.length} characters) condensed by the small model. The full output is saved at ${raw}: read it with read_file (offset and limit select lines) when you need exact text.]\n\n${summary}`,
      };
    });
  },
}));

/** The output as one text, or undefined when it holds images (left alone). */
function textOf(result: ToolResult): string | undefined {
  if (typeof result.content === 'string') return result.content;
  if (!result.content.every((block) => block.type === 'text')) return undefined;
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

async function summarise(kernel: Kernel, turn: Turn, call: ToolCall, text: string, settings: { maxInputChars: number; summaryTokens: number }): Promise<string> {
  const half = Math.floor(settings.maxInputChars / 2);
  const clipped = text.length <= settings.maxInputChars ? text : `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters not shown …]\n${text.slice(-half)}`;
  const input = JSON.stringify(call.input ?? {});
  const response = await kernel.services.require('query', 'compact-api-micro').ask({
    tier: 'small',
    system: [{ type: 'text', text: SYSTEM }],
    maxTokens: settings.summaryTokens,
    messages: [{ role: 'user', content: `Tool: ${call.name}\nInput: ${input.length > 1000 ? `${input.slice(0, 1000)}…` : input}\n\n<output>\n${clipped}\n</output>` }],
  }, turn);
  const summary = responseText(response.content).trim();
  if (!summary) throw new Error('the small model returned an empty summary');
  if (response.stopReason === 'max_tokens') throw new Error(`the summary was cut off at ${settings.summaryTokens} tokens`);
  return summary;
}
