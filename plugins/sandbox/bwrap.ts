/** Finding bubblewrap, checking it can create namespaces here, and building its argument list. */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Runs `bwrap … true` once: a container without user namespaces fails here, not on the first real command. */
export function probe(bwrap: string): string | undefined {
  const result = spawnSync(bwrap, ['--die-with-parent', '--unshare-all', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (result.error) return result.error.message;
  if (result.status !== 0) return (result.stderr || `exit code ${result.status}`).trim().split('\n')[0];
  return undefined;
}

export interface BwrapSpec {
  projectRoot: string;
  /** The session's private temp dir: writable, and TMPDIR inside. */
  tmpDir: string;
  cwd: string;
  allowWrite: string[];
  env: Record<string, string>;
  /** Extra directories to bind writable (the proxy socket's). */
  sockets: string[];
}

const exists = (p: string) => existsSync(p);
const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/**
 * The root read-only, a fresh /tmp, the project, the session temp dir and `allowWrite` writable, then
 * `.git/hooks`, `.git/config` and the project's `agent.config.*` read-only again; every namespace unshared
 * (no network at all: the proxy bridge is the only way out).
 */
export function bwrapArgs(spec: BwrapSpec): string[] {
  const args = ['--die-with-parent', '--new-session', '--unshare-all', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  const bind = (p: string) => args.push('--bind', p, p);
  const roBind = (p: string) => args.push('--ro-bind', p, p);
  bind(spec.projectRoot);
  bind(spec.tmpDir);
  for (const p of spec.allowWrite) if (exists(p)) bind(p);
  for (const p of spec.sockets) bind(p);
  const git = path.join(spec.projectRoot, '.git');
  if (isDir(git)) {
    const hooks = path.join(git, 'hooks');
    // A missing hooks folder would let a command create one; make it exist so it can be mounted read-only.
    if (!exists(hooks)) mkdirSync(hooks, { recursive: true });
    roBind(hooks);
    if (exists(path.join(git, 'config'))) roBind(path.join(git, 'config'));
  }
  for (const name of safeList(spec.projectRoot)) if (/^agent\.config\.(ts|mts|cts|js|mjs|cjs|json)$/.test(name)) roBind(path.join(spec.projectRoot, name));
  for (const [key, value] of Object.entries(spec.env)) args.push('--setenv', key, value);
  args.push('--chdir', spec.cwd);
  return args;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
