/**
 * A command file's body made into the prompt: `$ARGUMENTS` and `$1`…`$9` filled in, `` !`command` `` replaced
 * by the command's output (through the permission policy, never for an untrusted project's file), and each
 * `@path` the text names included after it (confined like `read_file`: judged by the permission policy).
 * Only the file's own text is expanded: its includes are found before the arguments are filled in, and arguments
 * and command output are inserted as they are (an `@path` or `` !`…` `` in them is text); in a `` !`command` ``
 * each argument is one quoted shell word.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type { Kernel, Session } from '../../kernel/index.js';
import { judge, runBash } from './tool-call.js';

export interface ExpandContext {
  kernel: Kernel;
  session: Session;
  signal: AbortSignal;
  /** The command's name and file, for messages. */
  name: string;
  file: string;
  /** `` !`command` `` may run: the user installed the file, or the project is trusted. */
  mayRun: boolean;
  /**
   * The root of the untrusted project the file comes from: its `@path` includes are read only inside it (no link
   * out, no other hard link), in any permission mode, as that project's AGENTS.md imports are.
   */
  confineTo?: string;
}

const SHELL = /!`([^`\n]+)`/g;
const INCLUDE = /(^|[\s(])@([^\s`'"<>()]+)/g;
/** Bytes of one included file; the rest is cut with a note. */
const MAX_INCLUDE = 256 * 1024;

/** Words as a shell would split them for `$1`…`$9` (quotes group, backslash escapes). */
export function splitArguments(args: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|((?:[^\s"'\\]|\\.)+)/g;
  for (const m of args.matchAll(re)) out.push((m[1] ?? m[2] ?? m[3] ?? '').replace(/\\(.)/g, '$1'));
  return out;
}

const PLACEHOLDERS = /\$ARGUMENTS|\$([1-9])/g;
/** One placeholder: in a body (it takes the arguments), or in an include's path (`@$1`: the argument would choose the file). */
const PLACEHOLDER = /\$ARGUMENTS|\$[1-9]/;

/** `text` with `$ARGUMENTS` and `$1`…`$9` filled in; `line` and `word` say how the whole line and one word go in. */
function fill(text: string, args: string, line: (words: string[]) => string, word: (w: string) => string): string {
  const words = splitArguments(args);
  return text.replace(PLACEHOLDERS, (whole, n: string | undefined) => {
    if (!n) return line(words);
    const w = words[Number(n) - 1];
    // A word not given is no word, as an unset `$3` is in a shell: `git log $1` with no arguments is `git log`.
    return w === undefined ? '' : word(w);
  });
}

export function fillArguments(text: string, args: string): string {
  return fill(text, args, () => args, (w) => w);
}

/** `word` as one literal shell word: single-quoted, a `'` inside closed, escaped and reopened. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A `` !`command` `` line with its arguments filled in as literal words: `$1`…`$9` each one quoted word (nothing
 * when not given), `$ARGUMENTS` every word quoted on its own, so `!`git log $ARGUMENTS`` still gets `--oneline -5`
 * as two options while `; rm -rf ~`, `$(…)`, a backquote or a glob in an argument is only text.
 */
export function fillShellArguments(command: string, args: string): string {
  return fill(command, args, (words) => words.map(shellQuote).join(' '), shellQuote);
}

export async function expandCommand(body: string, args: string, ctx: ExpandContext): Promise<string> {
  const parts: string[] = [];
  let last = 0;
  for (const m of body.matchAll(SHELL)) {
    parts.push(await textPart(body.slice(last, m.index), args, ctx));
    parts.push(await shellOutput(fillShellArguments(m[1]!, args), ctx));
    last = m.index + m[0].length;
  }
  parts.push(await textPart(body.slice(last), args, ctx));
  let prompt = parts.join('').trim();
  // A file with no place for its arguments still gets them, as Claude Code does.
  if (args && !PLACEHOLDER.test(body)) prompt += `\n\nARGUMENTS: ${args}`;
  return prompt;
}

/**
 * A part of the file's text with its arguments filled in and the files it names included after it. The includes are
 * found in the file's own text before the arguments go in, so an `@path` the user (or a script passing on text it
 * was given) puts in an argument stays text.
 */
async function textPart(own: string, args: string, ctx: ExpandContext): Promise<string> {
  const blocks = await includes(own, ctx);
  const text = fillArguments(own, args);
  return blocks.length ? `${text.trimEnd()}\n\n${blocks.join('\n\n')}\n\n` : text;
}

async function shellOutput(command: string, ctx: ExpandContext): Promise<string> {
  if (!ctx.mayRun) throw new Error(`/${ctx.name}: ${ctx.file} is in a project that is not trusted, so its !\`…\` commands do not run (keel trust makes it trusted)`);
  const result = await runBash(ctx.kernel, ctx.session, command, ctx.signal);
  const text = typeof result.content === 'string' ? result.content : result.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  if (result.isError) throw new Error(`/${ctx.name}: !\`${command}\` did not run: ${text.split('\n')[0]}`);
  return text.trimEnd();
}

/**
 * The first MAX_INCLUDE bytes of a regular file and its size, or undefined when `abs` is no regular file (missing,
 * a folder, a FIFO, a device): read through the `project-files` service, never more than it includes.
 */
async function readHead(abs: string, ctx: ExpandContext): Promise<{ text: string; size: number } | { refused: string } | undefined> {
  // A word that names no regular file stays as written; it is not opened (a FIFO would wait for a writer).
  if (!statSync(abs, { throwIfNoEntry: false })?.isFile()) return undefined;
  const files = ctx.kernel.services.require('project-files', 'custom-commands');
  try {
    return await files.head(abs, { maxBytes: MAX_INCLUDE, ...(ctx.confineTo === undefined ? {} : { project: ctx.confineTo }) });
  } catch (err) {
    // Refused by the reader's rule (outside the untrusted project, hard-linked, a secret): said, and nothing is sent.
    const reason = (err as { reason?: unknown }).reason;
    return typeof reason === 'string' ? { refused: reason } : undefined;
  }
}


/** A block for each `@path` the text names that the policy lets be read. */
async function includes(text: string, ctx: ExpandContext): Promise<string[]> {
  const blocks: string[] = [];
  for (const m of text.matchAll(INCLUDE)) {
    const written = m[2]!.replace(/[.,;:!?]+$/, '');
    // `@server:uri` is an MCP resource (the MCP bridge's), not a path.
    if (!written || /^[\w-]+:/.test(written) || PLACEHOLDER.test(written)) continue;
    const abs = path.resolve(ctx.session.cwd, written);
    const verdict = await judge(ctx.kernel, ctx.session, 'read_file', { path: abs }, ctx.signal);
    if (!verdict.allowed) throw new Error(`/${ctx.name}: @${written} is not included: ${verdict.reason}`);
    const head = await readHead(abs, ctx);
    // A word that merely starts with @ (a handle, a decorator) names no file: it stays as written.
    if (!head) continue;
    if ('refused' in head) throw new Error(`/${ctx.name}: @${written} is not included: ${head.refused}`);
    const cut = head.size > MAX_INCLUDE;
    blocks.push(`Contents of ${written}${cut ? ` (the first ${MAX_INCLUDE} bytes of ${head.size})` : ''}:\n\`\`\`\n${head.text.replace(/\n$/, '')}\n\`\`\``);
  }
  return blocks;
}
