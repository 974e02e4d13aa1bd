/** Tab completion: `/name` from the command list, `@path` from the files under the session's folder. */
import { readdirSync } from 'node:fs';
import path from 'node:path';

export interface Suggestion {
  /** What replaces the word being typed. */
  value: string;
  label: string;
  hint?: string;
}

export function slashSuggestions(word: string, commands: Array<{ name: string; description: string }>): Suggestion[] {
  if (!/^\/[\w:-]*$/.test(word)) return [];
  const typed = word.slice(1);
  return commands.filter((c) => c.name.startsWith(typed)).map((c) => ({ value: `/${c.name} `, label: `/${c.name}`, hint: c.description }));
}

const SKIP = new Set(['.git', 'node_modules']);

/** `@src/ma` → entries of `src/` starting with `ma` (folders end with `/` so Tab goes on into them). */
export function pathSuggestions(word: string, cwd: string, limit = 8): Suggestion[] {
  if (!word.startsWith('@')) return [];
  const typed = word.slice(1);
  const slash = typed.lastIndexOf('/');
  const dirPart = slash === -1 ? '' : typed.slice(0, slash + 1);
  const prefix = slash === -1 ? typed : typed.slice(slash + 1);
  let entries: Array<{ name: string; dir: boolean }>;
  try {
    entries = readdirSync(path.resolve(cwd, dirPart || '.'), { withFileTypes: true }).map((e) => ({ name: e.name, dir: e.isDirectory() }));
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.name.startsWith(prefix) && !SKIP.has(e.name) && (prefix.startsWith('.') || !e.name.startsWith('.')))
    .sort((a, b) => Number(b.dir) - Number(a.dir) || a.name.localeCompare(b.name))
    .slice(0, limit)
    .map((e) => {
      const rel = `${dirPart}${e.name}${e.dir ? '/' : ''}`;
      return { value: `@${rel}${e.dir ? '' : ' '}`, label: `@${rel}` };
    });
}

/** The longest prefix all suggestions share, for a first Tab that completes as far as it is unambiguous. */
export function commonPrefix(values: string[]): string {
  if (values.length === 0) return '';
  let prefix = values[0];
  for (const v of values) while (!v.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}
