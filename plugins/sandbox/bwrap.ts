/** Finding bubblewrap, checking it can create namespaces here, and building its argument list. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import which from 'which';

/** `name` on PATH (`envPath`), or undefined; an empty entry is skipped, not read as the working folder (a cloned repository's own `bwrap`). */
export function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  const dirs = envPath.split(path.delimiter).filter(Boolean).join(path.delimiter);
  return (dirs && which.sync(name, { path: dirs, nothrow: true })) || undefined;
}

/** Runs `bwrap … true` once: a container without user namespaces fails here, not on the first real command. */
export function probe(bwrap: string): string | undefined {
  const result = spawnSync(bwrap, ['--die-with-parent', '--unshare-all', '--cap-drop', 'ALL', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (result.error) return result.error.message;
  if (result.status !== 0) return (result.stderr || `exit code ${result.status}`).trim().split('\n')[0];
  return undefined;
}

export interface BwrapSpec {
  projectRoot: string;
  /** False when the project itself lies inside a protected path: then it is mounted read-only. */
  projectWritable: boolean;
  /** The session's private temp dir: writable, and TMPDIR inside. */
  tmpDir: string;
  cwd: string;
  allowWrite: string[];
  env: Record<string, string>;
  /** Extra directories to bind writable (the proxy socket's). */
  sockets: string[];
  /** Protected paths to bind read-only, folders to pin, openings inside them (from `survey`). */
  readOnly: string[];
  pinned: string[];
  writable: string[];
  /** Read-protected paths (secrets, `$KEEL_HOME`) to hide, and the parts of them left readable. */
  hidden: Array<{ path: string; dir: boolean }>;
  readable: string[];
  /** Missing protected names to hold with an empty read-only folder (`emptyDir`), so they cannot be created. */
  placeholders?: string[];
  emptyDir?: string;
}

/**
 * Read-only binds and pins per command at most, shallowest first; deeper ones are left to the check afterwards.
 * Each costs bubblewrap a few milliseconds, and more than linearly: 2 000 took 35 s to set up.
 */
export const MAX_GUARD_MOUNTS = 128;

const exists = (p: string) => existsSync(p);
const depth = (p: string) => p.split(path.sep).filter(Boolean).length;

/**
 * The root read-only, a fresh /tmp, secrets hidden, the project, the session temp dir and `allowWrite`
 * writable, then the protected paths in them read-only again and their folders pinned (bound onto themselves,
 * so a rename fails with EBUSY); every namespace unshared and every capability dropped (no network at all: the
 * proxy bridge is the only way out). Mounts are applied parents first, so a deeper one is never covered.
 */
export function bwrapArgs(spec: BwrapSpec): { args: string[]; dropped: number } {
  const mounts: Array<{ at: string; args: string[] }> = [
    { at: '/', args: ['--ro-bind', '/', '/'] },
    { at: '/dev', args: ['--dev', '/dev'] },
    { at: '/proc', args: ['--proc', '/proc'] },
    { at: '/tmp', args: ['--tmpfs', '/tmp'] },
  ];
  const add = (flag: string, p: string) => mounts.push({ at: p, args: [flag, p, p] });
  for (const hide of spec.hidden) mounts.push({ at: hide.path, args: hide.dir ? ['--tmpfs', hide.path] : ['--ro-bind', '/dev/null', hide.path] });
  for (const p of spec.readable) if (exists(p)) add('--ro-bind', p);
  add(spec.projectWritable ? '--bind' : '--ro-bind', spec.projectRoot);
  add('--bind', spec.tmpDir);
  for (const p of spec.allowWrite) if (exists(p)) add('--bind', p);
  for (const p of spec.sockets) add('--bind', p);
  const guard: Array<{ at: string; args: string[] }> = [];
  for (const p of spec.pinned) guard.push({ at: p, args: ['--bind', p, p] });
  for (const p of spec.readOnly) guard.push({ at: p, args: ['--ro-bind', p, p] });
  for (const p of spec.writable) guard.push({ at: p, args: ['--bind', p, p] });
  // Never dropped for the mount budget: a missing name has no check afterwards that could stop it loading first.
  const held = (spec.placeholders ?? []).map((p) => ({ at: p, args: ['--ro-bind', spec.emptyDir!, p] }));
  const kept = guard.length > MAX_GUARD_MOUNTS ? [...guard].sort((a, b) => depth(a.at) - depth(b.at)).slice(0, MAX_GUARD_MOUNTS) : guard;
  const ordered = [...mounts, ...kept, ...held].map((m, i) => ({ ...m, i })).sort((a, b) => depth(a.at) - depth(b.at) || a.i - b.i);
  // --as-pid-1: the command is the namespace's init, so when it exits the kernel kills everything it left
  // running before bwrap returns; nothing writes after the tool has compared the protected paths.
  const args = ['--die-with-parent', '--new-session', '--unshare-all', '--as-pid-1', '--cap-drop', 'ALL'];
  for (const m of ordered) args.push(...m.args);
  // Last, once the readable parts are mounted inside them: the hiding tmpfs mounts become read-only.
  for (const hide of spec.hidden) if (hide.dir) args.push('--remount-ro', hide.path);
  for (const [key, value] of Object.entries(spec.env)) args.push('--setenv', key, value);
  args.push('--chdir', spec.cwd);
  return { args, dropped: guard.length - kept.length };
}
