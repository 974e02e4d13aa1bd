/**
 * The diff a frontend shows when it asks about an edit: the file as it is now against the file as
 * `edit_file` or `write_file` would leave it. The edit is applied in memory with edit_file's rules (exact
 * match, unique unless replace_all, edits in order, a CRLF file matched and written in CRLF), re-stated here
 * because plugins never import each other. When the edit would fail, there is no preview: the tool reports it.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';

/** Files above this size get no preview: diffing them would stall the question. */
const MAX_PREVIEW_BYTES = 1024 * 1024;

interface Edit {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

export const PREVIEWED_TOOLS = new Set(['edit_file', 'write_file']);

/**
 * The file as it is now (undefined: it does not exist yet) and as the `edit_file` / `write_file` call would
 * leave it; undefined when that cannot be told (binary, huge, not a file, an edit that would fail).
 */
export async function postEditText(toolName: string, input: unknown, abs: string): Promise<{ before: string | undefined; after: string } | undefined> {
  if (typeof input !== 'object' || input === null) return undefined;
  const args = input as Record<string, unknown>;
  const before = await currentText(abs);
  if (before === null) return undefined;
  let after: string | undefined;
  if (toolName === 'write_file') after = typeof args.content === 'string' ? args.content : undefined;
  else if (toolName === 'edit_file') after = applyEdits(before, editsOf(args), before === undefined);
  return after === undefined ? undefined : { before, after };
}

/** The unified diff for an `edit_file` / `write_file` call, or undefined when there is nothing to show. */
export async function editPreview(toolName: string, input: unknown, abs: string, cwd: string): Promise<string | undefined> {
  const edit = await postEditText(toolName, input, abs);
  if (!edit) return undefined;
  const { createPatch } = await import('diff');
  const lf = (s: string) => s.replace(/\r\n/g, '\n');
  const rel = path.relative(cwd, abs);
  const shown = rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs;
  const patch = createPatch(shown, lf(edit.before ?? ''), lf(edit.after), undefined, undefined, { context: 3 });
  return patch.replace(/^Index: .*\n=+\n/, '').trimEnd();
}

/** The file's text; undefined when it does not exist yet; null when it cannot be previewed (binary, huge, a folder). */
async function currentText(abs: string): Promise<string | undefined | null> {
  const info = await stat(abs).catch(() => undefined);
  if (!info) return undefined;
  if (!info.isFile() || info.size > MAX_PREVIEW_BYTES) return null;
  const raw = await readFile(abs).catch(() => undefined);
  if (!raw) return null;
  if (raw[0] === 0xff && raw[1] === 0xfe) return raw.subarray(2).toString('utf16le');
  if (raw.subarray(0, 8192).includes(0)) return null;
  if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) return raw.subarray(3).toString('utf8');
  return raw.toString('utf8');
}

function editsOf(args: Record<string, unknown>): Edit[] | undefined {
  if (Array.isArray(args.edits)) return args.edits as Edit[];
  if (typeof args.old_string !== 'string' || typeof args.new_string !== 'string') return undefined;
  return [{ old_string: args.old_string, new_string: args.new_string, replace_all: args.replace_all === true }];
}

/** The text after every edit, or undefined when one would fail (so edit_file would change nothing). */
function applyEdits(before: string | undefined, edits: Edit[] | undefined, missing: boolean): string | undefined {
  if (!edits || edits.length === 0) return undefined;
  if (missing) return edits.length === 1 && edits[0].old_string === '' ? edits[0].new_string : undefined;
  let text = before ?? '';
  const crlf = dominantCrlf(text);
  for (const edit of edits) {
    const next = applyEdit(text, edit, crlf);
    if (next === undefined) return undefined;
    text = next;
  }
  return text;
}

const toCrlf = (s: string) => s.replace(/\r?\n/g, '\r\n');

function dominantCrlf(text: string): boolean {
  const crlf = text.split('\r\n').length - 1;
  return crlf > text.split('\n').length - 1 - crlf;
}

function count(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) n++;
  return n;
}

function applyEdit(text: string, edit: Edit, crlf: boolean): string | undefined {
  if (edit.old_string === edit.new_string) return undefined;
  if (edit.old_string === '') return text === '' ? (crlf ? toCrlf(edit.new_string) : edit.new_string) : undefined;
  let oldText = edit.old_string;
  let newText = crlf ? toCrlf(edit.new_string) : edit.new_string;
  let n = count(text, oldText);
  if (n === 0 && text.includes('\r\n') && /(^|[^\r])\n/.test(oldText)) {
    const asCrlf = toCrlf(oldText);
    const m = count(text, asCrlf);
    if (m > 0) {
      oldText = asCrlf;
      newText = toCrlf(edit.new_string);
      n = m;
    }
  }
  if (n === 0 || (n > 1 && !edit.replace_all)) return undefined;
  if (edit.replace_all) return text.split(oldText).join(newText);
  const at = text.indexOf(oldText);
  return text.slice(0, at) + newText + text.slice(at + oldText.length);
}
