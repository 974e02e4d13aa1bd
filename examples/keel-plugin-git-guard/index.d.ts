import type { Plugin } from 'keel';

export interface GitGuardOptions {
  /** Branches no commit may land on and no push may target (default: main, master). */
  branches?: string[];
}

/** Denies bash commands that commit on or push to a protected branch. */
declare const gitGuard: (options?: GitGuardOptions) => Plugin;
export default gitGuard;
