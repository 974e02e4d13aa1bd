import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Summaries on disk, keyed by a hash of the output, so one output never costs a second call. */
export class SummaryCache {
  constructor(private readonly dir: string) {}

  key(content: string, version: string): string {
    return createHash('sha256').update(version).update('\0').update(content).digest('hex');
  }

  rawPath(key: string): string {
    return path.join(this.dir, `${key}.txt`);
  }

  async get(key: string): Promise<string | undefined> {
    try {
      const entry = JSON.parse(await readFile(path.join(this.dir, `${key}.json`), 'utf8')) as { summary?: unknown };
      return typeof entry.summary === 'string' && entry.summary ? entry.summary : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stores the summary and the raw output (atomically, so a crash never leaves half an entry). */
  async set(key: string, summary: string, raw: string, tool: string): Promise<void> {
    // Tool output may hold secrets: only the user may read it (folders 0700, files 0600, as everywhere in KEEL_HOME).
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await writeAtomic(this.rawPath(key), raw);
    await writeAtomic(path.join(this.dir, `${key}.json`), JSON.stringify({ summary, tool, createdAt: new Date().toISOString() }));
  }
}

async function writeAtomic(file: string, content: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, content, { mode: 0o600 });
  await rename(temp, file);
}
