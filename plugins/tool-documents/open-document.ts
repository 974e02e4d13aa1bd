/**
 * Opening the files tool-documents reads and edits through the file tools' `safe-files` service (plugin tools-fs):
 * regular files only, never blocking on a FIFO, sizes checked before anything is read.
 */
import os from 'node:os';
import path from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { Kernel } from '../../kernel/index.js';

/** What tool-documents uses of the `safe-files` service. */
export interface SafeFilesLike {
  realTarget(abs: string): Promise<string>;
  open(real: string, mode: 'read' | 'update', shown: string): Promise<{ handle: FileHandle; info: Stats }>;
  readAll(handle: FileHandle, size: number): Promise<Buffer>;
  writeAll(handle: FileHandle, bytes: Buffer, previous?: Buffer): Promise<void>;
}

export function safeFiles(kernel: Kernel): SafeFilesLike | undefined {
  const service = kernel.services.get('safe-files') as Partial<SafeFilesLike> | undefined;
  return typeof service?.open === 'function' && typeof service.realTarget === 'function' && typeof service.readAll === 'function' && typeof service.writeAll === 'function'
    ? (service as SafeFilesLike)
    : undefined;
}

export const NO_SAFE_FILES = "reading and editing documents needs the file tools' safe-files service (plugin tools-fs), which this agent does not have";

/** A tool argument as the file tools read it: `~` is the home directory, relative paths start at `cwd`. */
export function resolveArg(input: string, cwd: string): string {
  const expanded = input === '~' || input.startsWith('~/') ? path.join(os.homedir(), input.slice(1)) : input;
  return path.resolve(cwd, expanded);
}

/** The safe open's refusals carry `kind` (symlink, directory, special, moved, appeared). */
export function openRefusal(err: unknown): { kind: string; message: string } | undefined {
  const kind = (err as { kind?: unknown }).kind;
  return typeof kind === 'string' ? { kind, message: (err as Error).message } : undefined;
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
