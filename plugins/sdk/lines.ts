/** NDJSON input: one JSON value per line; a line that is not JSON becomes an error item naming it. */
import { createInterface } from 'node:readline';
import type { Incoming } from './driver.js';

export async function* readLines(stream: NodeJS.ReadableStream, label = 'stdin'): AsyncGenerator<Incoming> {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let number = 0;
  try {
    for await (const line of lines) {
      number++;
      if (!line.trim()) continue;
      const where = `${label} line ${number}`;
      try {
        yield { where, value: JSON.parse(line) };
      } catch (err) {
        const preview = line.length > 60 ? `${line.slice(0, 60)}…` : line;
        yield { where, error: `not valid JSON (${(err as Error).message}): ${preview}` };
      }
    }
  } finally {
    lines.close();
  }
}
