/**
 * Instruction files (`AGENTS.md`, `CLAUDE.md`) hold settings in their YAML front matter, and their `@path` imports
 * are files read into every later session's prompt without asking (a trusted project may import files outside
 * it). The file tools may change the body freely, and are asked about any call that would change, add or remove
 * the front matter, or add an import: otherwise a write the mode allows (edits mode) would become, at the next
 * start or in a sub-agent, a read outside the project that nobody was asked about.
 */
import { frontMatterOf } from '../../kernel/index.js';
import { postEditText } from './preview.js';

/** Tools whose result can be computed before they run, so a body-only change can be told apart. */
export const FRONT_MATTER_TOOLS = new Set(['write_file', 'edit_file']);

/**
 * The instructions plugin's import syntax (plugins/instructions/files.ts), read over the whole text — code spans
 * included, which it skips — so this sees every import it would follow, and a few more: the safe side. Only
 * references that look like paths (a `/` or a `.`) count, so `@alice` stays a mention.
 */
const IMPORT = /(?<![\w@`/])@((?:~\/|\/)?[\w.][\w.\-/]*)/g;

function importsOf(text: string): Set<string> {
  const refs = new Set<string>();
  for (const match of text.matchAll(IMPORT)) {
    const ref = match[1]!.replace(/[.,;:!?)]+$/, '');
    if (/[/.]/.test(ref) && /\w/.test(ref)) refs.add(ref);
  }
  return refs;
}

/**
 * What the call would change that the instructions plugin loads as settings or reads unasked — "change its front
 * matter", "add the @import @x" — or undefined when it provably changes only the body's text. A call whose result
 * cannot be computed counts as a front-matter change.
 */
export async function settingsChange(toolName: string, input: unknown, abs: string): Promise<string | undefined> {
  const frontMatter = 'change its front matter';
  if (!FRONT_MATTER_TOOLS.has(toolName)) return frontMatter;
  const edit = await postEditText(toolName, input, abs).catch(() => undefined);
  if (!edit) return frontMatter;
  if (frontMatterOf(edit.before ?? '') !== frontMatterOf(edit.after)) return frontMatter;
  const before = importsOf(edit.before ?? '');
  const added = [...importsOf(edit.after)].filter((ref) => !before.has(ref));
  if (added.length) return `add the @import ${added.map((r) => `@${r}`).join(', ')} (a file read into every later session's prompt without asking)`;
  return undefined;
}
