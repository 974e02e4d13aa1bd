/**
 * The optional `file-access` service: a frontend that hosts Keel inside an editor (the `acp` plugin) offers it so
 * that read_file, write_file and edit_file read and write a session's text files through the editor — its unsaved
 * buffers are what the model sees, and edits land in its undo history. The file tools consult it after the
 * permission policy has allowed the call; without it (or when `handles` says no for the session) they use the disk.
 * Images and binary files always come from the disk.
 */
import type { Session, ToolContext } from '../../kernel/index.js';

export interface FileAccess {
  /** Whether this session's text files go through the service (`read` for reads, `write` for writes). */
  handles(session: Session, what: 'read' | 'write'): boolean;
  /** The file's whole text as the editor has it. Rejects with `code: 'ENOENT'` when the file does not exist. */
  readText(session: Session, abs: string, signal: AbortSignal): Promise<string>;
  /** Replaces the file's whole text (creating it when missing). */
  writeText(session: Session, abs: string, text: string, signal: AbortSignal): Promise<void>;
}

declare module '../../kernel/types.js' {
  interface Services {
    /** Routes the file tools' text reads and writes for a session (see plugins/tools-fs/file-access.ts). */
    'file-access': FileAccess;
  }
}

/** The service when it handles `what` for this call's session. */
export function fileAccessFor(ctx: ToolContext, what: 'read' | 'write'): FileAccess | undefined {
  const access = ctx.kernel.services.get('file-access');
  return access?.handles(ctx.session, what) ? access : undefined;
}

/** A missing file, as the service reports it (or as an editor's error message says it). */
export function isMissing(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 'ENOENT' || (typeof e?.message === 'string' && /\b(not found|no such file|ENOENT|does not exist)\b/i.test(e.message));
}

/** The metadata `remember`/`staleReason` get for text that came from the editor: no mtime, so the hash decides. */
export const editorInfo = (bytes: Buffer) => ({ mtimeMs: Number.NaN, size: bytes.length });

/** Characters of before/after text a result's display carries for a frontend's diff view (beyond it, only the diff). */
const MAX_DISPLAY_TEXT = 1_000_000;

/** The whole old and new text for a frontend's diff view (an editor's), when small enough to carry. */
export function textsForDisplay(before: string | undefined, after: string): { oldText?: string | null; newText?: string } {
  if ((before?.length ?? 0) + after.length > MAX_DISPLAY_TEXT) return {};
  return { oldText: before ?? null, newText: after };
}

/** The file's current text through the editor when it handles reads, else from the disk; undefined when missing. */
export async function currentText(ctx: ToolContext, access: FileAccess, abs: string): Promise<string | undefined> {
  const reader = fileAccessFor(ctx, 'read');
  try {
    if (reader) return await reader.readText(ctx.session, abs, ctx.signal);
    const { readFile } = await import('node:fs/promises');
    return await readFile(abs, 'utf8');
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}
