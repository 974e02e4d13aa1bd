/**
 * Prompt history per project, kept in `$KEEL_HOME/history/<project>.jsonl` (one JSON string per line, so
 * multi-line prompts survive), newest last, capped.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';

export interface PromptHistory {
  /** Oldest first. */
  readonly entries: string[];
  add(entry: string): void;
  /** The newest entry before index `before` that contains `query`, for Ctrl+R. */
  search(query: string, before?: number): { index: number; entry: string } | null;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** The project's prompt history file (↑/↓, Ctrl+R), shared by every UI: `open()` reads the kernel's project's. */
    promptHistory: { open(): PromptHistory };
  }
}

const MAX_ENTRIES = 500;

export function historyFile(keelHome: string, projectRoot: string): string {
  const base = path.basename(projectRoot).replace(/[^\w.-]/g, '_') || 'root';
  const hash = createHash('sha256').update(projectRoot).digest('hex').slice(0, 8);
  return path.join(keelHome, 'history', `${base}-${hash}.jsonl`);
}

export class History implements PromptHistory {
  readonly entries: string[];

  constructor(private readonly file: string) {
    this.entries = load(file);
  }

  add(entry: string): void {
    const text = entry.trim();
    if (!text || this.entries[this.entries.length - 1] === text) return;
    this.entries.push(text);
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    if (this.entries.length > MAX_ENTRIES * 2) {
      this.entries.splice(0, this.entries.length - MAX_ENTRIES);
      writeFileSync(this.file, this.entries.map((e) => `${JSON.stringify(e)}\n`).join(''), { mode: 0o600 });
    } else appendFileSync(this.file, `${JSON.stringify(text)}\n`, { mode: 0o600 });
  }

  /** The newest entry before index `before` that contains `query`, for Ctrl+R. */
  search(query: string, before = this.entries.length): { index: number; entry: string } | null {
    for (let i = Math.min(before, this.entries.length) - 1; i >= 0; i--) {
      if (this.entries[i].includes(query)) return { index: i, entry: this.entries[i] };
    }
    return null;
  }
}

function load(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const entries: string[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'string') entries.push(value);
    } catch {
      // a torn last line from a crash: skip it
    }
  }
  return entries.slice(-MAX_ENTRIES);
}
