import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { IgnoreRules } from './ignore-rules.js';
import { COLLECT_LIMIT, GrepError, MAX_FILE_BYTES, addLines, sortedLines, type GrepLine, type GrepOutcome, type GrepQuery } from './grep-search.js';

interface RgText {
  text?: string;
  bytes?: string;
}

interface RgMessage {
  type: 'begin' | 'match' | 'context' | 'end' | 'summary';
  data: { path?: RgText; lines?: RgText; line_number?: number };
}

const textOf = (t: RgText | undefined) => (t?.text !== undefined ? t.text : Buffer.from(t?.bytes ?? '', 'base64').toString('utf8'));

/** The arguments that make ripgrep walk like the fallback: hidden files, .gitignore with or without git, no .git. */
export function rgArgs(query: GrepQuery): string[] {
  const args = ['--json', '--no-config', '--hidden', '--no-require-git', '--no-ignore-global', '--no-messages', '--glob', '!.git', '--max-filesize', String(MAX_FILE_BYTES)];
  if (query.ignoreCase) args.push('--ignore-case');
  if (query.multiline) args.push('--multiline');
  if (query.context > 0 && !query.filesOnly) args.push('--context', String(query.context));
  if (query.filesOnly) args.push('--max-count', '1');
  if (query.glob) args.push('--glob', query.glob);
  args.push('--regexp', query.pattern);
  return args;
}

/**
 * Folders are searched from inside (no path argument), so globs with a slash match relative paths as in the
 * fallback; a single file is passed by name.
 */
function runSpec(query: GrepQuery, isFile: boolean): { cwd: string; args: string[] } {
  if (isFile) return { cwd: path.dirname(query.target), args: [...rgArgs(query), '--', query.target] };
  return { cwd: query.target, args: rgArgs(query) };
}

/** Runs ripgrep and reads its JSON lines into per-file results. */
export async function searchRg(rgPath: string, query: GrepQuery, signal?: AbortSignal): Promise<GrepOutcome> {
  const isFile = (await stat(query.target)).isFile();
  const spec = runSpec(query, isFile);
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, spec.args, { cwd: spec.cwd, stdio: ['ignore', 'pipe', 'pipe'], signal });
    const files = new Map<string, Map<number, GrepLine>>();
    let collected = 0;
    let truncated = false;
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (truncated) return;
      const msg = JSON.parse(line) as RgMessage;
      if (msg.type !== 'match' && msg.type !== 'context') return;
      const abs = path.resolve(spec.cwd, textOf(msg.data.path));
      const first = msg.data.line_number ?? 0;
      const body = textOf(msg.data.lines).replace(/\n$/, '').split('\n');
      const entry = files.get(abs) ?? new Map<number, GrepLine>();
      files.set(abs, entry);
      addLines(
        entry,
        body.map((text, i) => ({ n: first + i, text: text.endsWith('\r') ? text.slice(0, -1) : text, match: msg.type === 'match' })),
      );
      collected += body.length;
      if (collected > COLLECT_LIMIT) {
        truncated = true;
        child.kill();
      }
    });
    child.on('error', (err) => reject(signal?.aborted ? err : new GrepError(`could not run ripgrep: ${err.message}`)));
    child.on('close', (code) => {
      lines.close();
      if (code === 2 && !truncated && files.size === 0) {
        reject(new GrepError(stderr.trim().split('\n').filter(Boolean).join(' ') || 'ripgrep failed'));
        return;
      }
      // ripgrep lets a --glob whitelist override ignore rules for files (not folders): put those rules back.
      const rules = query.glob && !isFile ? new IgnoreRules(query.ignoreRoot) : undefined;
      const kept = [...files].filter(([abs]) => !rules?.ignored(abs, false));
      resolve({ files: kept.map(([abs, map]) => ({ abs, lines: sortedLines(map) })), truncated });
    });
  });
}
