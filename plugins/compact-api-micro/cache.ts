import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Summaries on disk, keyed by a hash of the output, so one output never costs a second call. */
export class SummaryCache {
  constructor(readonly dir: string) {}

  key(content: string, version: string): string {
    return createHash('sha256').update(version).update('\0').update(content).digest('hex');
  }

  async get(key: string): Promise<string | undefined> {
    try {
      const entry = JSON.parse(await readFile(path.join(this.dir, `${key}.json`), 'utf8')) as { summary?: unknown };
      return typeof entry.summary === 'string' && entry.summary ? entry.summary : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stores the summary (atomically, so a crash never leaves half an entry); the raw output is the session's to keep. */
  async set(key: string, summary: string, tool: string): Promise<void> {
    // Summaries may quote secrets: only the user may read them (folders 0700, files 0600, as everywhere in KEEL_HOME).
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeAtomic(path.join(this.dir, `${key}.json`), JSON.stringify({ summary, tool, createdAt: new Date().toISOString() }));
  }
}

/** Writes through a temporary file and a rename, so a reader never sees half a file. */
export async function writeAtomic(file: string, content: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temp, content, { mode: 0o600 });
    await rename(temp, file);
  } catch (err) {
    // A full disk leaves no half-written temporary file behind.
    await rm(temp, { force: true });
    throw err;
  }
}
