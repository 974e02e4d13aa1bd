/**
 * Reading a Markdown file that a project (or the user) put where Keel looks: `SKILL.md`, a custom command. A
 * cloned repository controls these names, so a name may be a link to a secret, to a file outside the project, to
 * `/dev/zero` or a FIFO, or a huge file. The file is read only when it is a regular file of at most
 * MAX_MARKDOWN_BYTES, and a project's file only when it resolves to no read-protected path (`~/.ssh`,
 * `$KEEL_HOME`, `.env`) and, in an untrusted folder, inside the project and without other hard links — the rule
 * `AGENTS.md` and its imports follow.
 */
import { constants, realpathSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';

/** Larger command or skill files are refused: their text would go whole into a prompt. */
export const MAX_MARKDOWN_BYTES = 1024 * 1024;

/** What a project's file may resolve to. */
export interface ProjectFileRule {
  /** The project root. */
  root: string;
  /** False in an untrusted folder: the file must resolve inside `root` and have no other hard link. */
  trusted: boolean;
  /** Why reading the resolved path is refused (a read-protected path), else undefined. */
  secret(real: string): string | undefined;
}

/** Opening a FIFO for reading would wait for a writer; a non-blocking open returns at once (no effect on files). */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

function realOf(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

/** The file's text; throws an Error whose message says why it was not read (without the file name). */
export async function readMarkdownFile(file: string, project?: ProjectFileRule): Promise<string> {
  let real: string;
  try {
    real = realpathSync.native(file);
  } catch (err) {
    throw new Error(`cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (project) {
    const secret = project.secret(real);
    if (secret) throw new Error(`not read: ${secret}`);
    if (!project.trusted && !isInside(real, realOf(project.root))) throw new Error(`not read: ${real} is outside the untrusted project ${project.root}`);
  }
  // The real path, without following a link swapped in since: what was judged is what is read.
  const handle = await open(real, READ_FLAGS).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`cannot be read: ${err.code ?? String(err)}`);
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`not read: ${real} is not a regular file`);
    if (project && !project.trusted && info.nlink > 1) throw new Error(`not read: ${real} has ${info.nlink} hard links, so it may be a file outside the untrusted project ${project.root}`);
    if (info.size > MAX_MARKDOWN_BYTES) throw new Error(`not read: it is larger than ${MAX_MARKDOWN_BYTES} bytes (${info.size})`);
    const buffer = Buffer.alloc(MAX_MARKDOWN_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > MAX_MARKDOWN_BYTES) throw new Error(`not read: it is larger than ${MAX_MARKDOWN_BYTES} bytes`);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}
