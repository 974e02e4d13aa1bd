/**
 * Reading one style file. A project's `.claude/output-styles/x.md` may be a link to a secret, to `/dev/zero` or a
 * FIFO, or a huge file: only a regular file of at most MAX_STYLE_BYTES is read, and a project's file only when it
 * resolves to no read-protected path (`~/.ssh`, `$KEEL_HOME`, `.env`) — the rule `AGENTS.md` imports follow.
 */
import { constants, realpathSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** A style is a few paragraphs; a larger file would go whole into every request's system prompt. */
export const MAX_STYLE_BYTES = 256 * 1024;
/** Opening a FIFO would wait for a writer; non-blocking, the open returns and fstat shows it is no file. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** The file's text; throws an Error saying why it was not read (without the file name). */
export async function readStyleFile(file: string, secret?: (real: string) => string | undefined): Promise<string> {
  let real: string;
  try {
    real = realpathSync.native(file);
  } catch (err) {
    throw new Error(`cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const why = secret?.(real);
  if (why) throw new Error(`not read: ${why}`);
  const handle = await open(real, READ_FLAGS).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`cannot be read: ${err.code ?? String(err)}`);
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`not read: ${real} is not a regular file`);
    if (info.size > MAX_STYLE_BYTES) throw new Error(`not read: it is larger than ${MAX_STYLE_BYTES} bytes (${info.size})`);
    const buffer = Buffer.alloc(MAX_STYLE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_STYLE_BYTES) throw new Error(`not read: it is larger than ${MAX_STYLE_BYTES} bytes`);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
