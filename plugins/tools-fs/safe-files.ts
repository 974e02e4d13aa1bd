/**
 * The `safe-files` service: the file tools' safe open and atomic replace, for plugins that read or write files the
 * model or the user names outside read_file/write_file/edit_file (tool-documents' notebooks and PDFs, checkpoints'
 * /rewind, /export's and /agents create's new files). Everything here refuses symbolic links and special files;
 * errors it raises for those carry `kind`.
 */
import { createFile, removeFile, replaceFile, type Expected } from './atomic.js';
import { openForWrite, openReal, readAll, realTarget, writeAll, type OpenMode, type Opened } from './safe-open.js';

export interface SafeFiles {
  /** The real path of `abs`: symlinks resolved; for a missing file, its real folder joined with its name. */
  realTarget(abs: string): Promise<string>;
  /** Opens `real` (from realTarget) as a regular file, without following a link; never blocks on a FIFO. */
  open(real: string, mode: OpenMode, shown: string): Promise<Opened>;
  /** Opens `real` to rewrite it through the handle, or creates it (and its folders). */
  openForWrite(real: string, shown: string): Promise<Opened & { created: boolean }>;
  /** The whole file through the handle. */
  readAll: typeof readAll;
  /** Replaces the content through the handle. */
  writeAll: typeof writeAll;
  /** Replaces `real` atomically (temp file beside it, fsync, rename), if it still is what `expect` says. */
  replace(real: string, bytes: Buffer, opts: { shown: string; mode: number; expect: Expected }): Promise<void>;
  /** Creates `real` (and its folders) atomically, only if nothing is there; else an error of kind `exists`. */
  create(real: string, bytes: Buffer, opts: { shown: string; mode: number }): Promise<void>;
  /** Removes `real` if it still is the regular file `expect` names; never follows a link. */
  remove(real: string, opts: { shown: string; expect: Expected }): Promise<void>;
}

export const safeFiles: SafeFiles = {
  realTarget,
  open: openReal,
  openForWrite,
  readAll,
  writeAll,
  replace: replaceFile,
  create: createFile,
  remove: removeFile,
};
