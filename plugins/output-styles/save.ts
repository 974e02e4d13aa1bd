/** Saves one key in the project's `.claude/settings.local.json` (Claude Code's per-user, uncommitted settings). */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * Sets `key` in the file, keeping every other key as it was. A file that is not a JSON object is left untouched
 * and named in the error; the write goes through a temporary file and a rename, so a crash leaves the old file.
 */
export async function saveLocalSetting(projectRoot: string, key: string, value: unknown): Promise<string> {
  const file = path.join(projectRoot, '.claude', 'settings.local.json');
  let settings: Record<string, unknown> = {};
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${file}: cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (text !== undefined && text.trim()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new Error(`${file}: not valid JSON (${err instanceof Error ? err.message : String(err)}); not changed`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(`${file}: must be a JSON object; not changed`);
    settings = parsed as Record<string, unknown>;
  }
  settings[key] = value;
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  return file;
}
