/** `/login`: asks for an Anthropic API key (hidden), checks it with the API, and stores it as `keel login` does. */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Writes `$KEEL_HOME/auth.json` ({ "apiKey": … }, mode 600) through a temporary file, so a crash leaves the old one. */
export async function storeApiKey(keelHome: string, apiKey: string): Promise<string> {
  if (!keelHome) throw new Error('KEEL_HOME is not set: there is nowhere to store the key');
  await mkdir(keelHome, { recursive: true, mode: 0o700 });
  const file = path.join(keelHome, 'auth.json');
  const temp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify({ apiKey }, null, 2)}\n`, { mode: 0o600 });
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  return file;
}
