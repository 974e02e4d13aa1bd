/**
 * Instruction files (`AGENTS.md`, `CLAUDE.md`) hold settings only in their YAML front matter: the file tools may
 * change the body freely, and are asked about any call that would change, add or remove the front matter.
 */
import { frontMatterOf } from '../../kernel/index.js';
import { postEditText } from './preview.js';

/** Tools whose result can be computed before they run, so a body-only change can be told apart. */
export const FRONT_MATTER_TOOLS = new Set(['write_file', 'edit_file']);

/** True unless the call provably leaves the file's front matter exactly as it is (creating one counts as a change). */
export async function changesFrontMatter(toolName: string, input: unknown, abs: string): Promise<boolean> {
  if (!FRONT_MATTER_TOOLS.has(toolName)) return true;
  const edit = await postEditText(toolName, input, abs).catch(() => undefined);
  if (!edit) return true;
  return frontMatterOf(edit.before ?? '') !== frontMatterOf(edit.after);
}
