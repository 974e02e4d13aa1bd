/**
 * Reading one agent file. A trusted project's `.claude/agents/x.md` may still be a link to a secret, to `/dev/zero`
 * or a FIFO, or a huge file: only a regular file of at most MAX_AGENT_BYTES is read, and a project's file only when
 * it resolves to no read-protected path (`~/.ssh`, `$KEEL_HOME`, `.env`) — the rule `AGENTS.md` imports follow.
 */
import { constants, realpathSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** An agent's prompt larger than this would go whole into every request of its runs. */
export const MAX_AGENT_BYTES = 1024 * 1024;
/** Opening a FIFO would wait for a writer; non-blocking, the open returns and fstat shows it is no file. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** The file's text; throws an Error naming `file` and why it was not read. */
export async function readAgentFile(file: string, secret?: (real: string) => string | undefined): Promise<string> {
  const real = realpathSync.native(file);
  const why = secret?.(real);
  if (why) throw new Error(`${file}: not read: ${why}`);
  const handle = await open(real, READ_FLAGS);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`${file}: not read: ${real} is not a regular file`);
    if (info.size > MAX_AGENT_BYTES) throw new Error(`${file}: not read: it is larger than ${MAX_AGENT_BYTES} bytes (${info.size})`);
    const buffer = Buffer.alloc(MAX_AGENT_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_AGENT_BYTES) throw new Error(`${file}: not read: it is larger than ${MAX_AGENT_BYTES} bytes`);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
