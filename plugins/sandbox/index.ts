import { existsSync, mkdtempSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { definePlugin, savedOutputDir, type ProtectedEntry, type Services, type Session } from '../../kernel/index.js';
export type { SandboxedCommand } from './service.js';
import { bwrapArgs, findOnPath, probe } from './bwrap.js';
import { compare, revert } from './revert.js';
import { recordOf, survey, type Guarded } from './survey.js';
import { BRIDGE, BRIDGE_PORT, startProxy } from './proxy.js';
import { isEmptyDir, placeholdersFor, removePlaceholder } from './placeholders.js';
import { heldByOthers, journal, settle } from './journal.js';
import { atExit, removeAtExit } from './at-exit.js';

export interface SandboxConfig {
  /** Run bash commands inside bubblewrap. Default false. */
  enabled?: boolean;
  /** When bubblewrap is missing or cannot run here, run commands unsandboxed instead of refusing them. Default false. */
  allowUnsandboxed?: boolean;
  /** More paths bash may write to (`~/…` and project-relative paths allowed). */
  allowWrite?: string[];
  network?: { allowedDomains?: string[] };
}

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    sandbox?: SandboxConfig;
  }
}

const sandboxSchema = z
  .object({
    enabled: z.boolean(),
    allowUnsandboxed: z.boolean(),
    allowWrite: z.array(z.string().min(1)),
    network: z.object({ allowedDomains: z.array(z.string().min(1)) }).partial().strict(),
  })
  .partial()
  .strict();

export interface SandboxOptions {
  /** The bubblewrap binary (default: `bwrap` on PATH). */
  bwrap?: string;
}

interface SessionSandbox {
  tmpDir: string;
}

const KEY = 'sandbox';

/** Runs `bash` commands inside bubblewrap: read-only root, writable project and temp dir, network by allow-list. */
export default definePlugin((opts: SandboxOptions = {}) => ({
  name: 'sandbox',
  kernel: '^1.0.0',
  config: { sandbox: sandboxSchema },
  apply(kernel) {
    let availability: { bwrap?: string; problem?: string } | undefined;
    let warned = false;
    let proxy: Promise<string> | undefined;
    /** The starting points of the sandboxed commands running now. */
    const live: Array<Map<string, Guarded>> = [];

    // Placeholders in use, by path: several commands (one in the background) may hold the same one.
    const holding = new Map<string, number>();
    let empty: string | undefined;
    /** An empty folder outside anything the sandbox can write: the source of every placeholder mount. */
    const emptyDir = () => {
      if (!empty) {
        empty = real(mkdtempSync(path.join(os.tmpdir(), 'keel-empty-')));
        removeAtExit(empty);
      }
      return empty;
    };
    /** Checks not run yet, by command: run at Keel's exit (every path: end, signals) once the commands are dead. */
    const unchecked = new Set<() => Promise<string | undefined>>();
    // Registered while this kernel has commands to check, and removed with the last one, so a kernel with no
    // command running is not held by the process.
    let stopChecking: (() => void) | undefined;
    const checkAtExit = () => {
      stopChecking ??= atExit(() => {
        // Stop and kill everything the tools started first (synchronously), so nothing writes after the check.
        (kernel.services.get('processes') as { reap(): number } | undefined)?.reap();
        // finish() does all its work before its first await, so it completes here.
        for (const finish of [...unchecked]) void finish();
      });
    };
    const uncheck = (finish: () => Promise<string | undefined>) => {
      unchecked.delete(finish);
      if (unchecked.size > 0 || !stopChecking) return;
      stopChecking();
      stopChecking = undefined;
    };
    // A Keel killed with SIGKILL never checked its running commands: settle them before this one runs any.
    let settled = false;
    const settleOnce = () => {
      if (settled || !kernel.config.keelHome) return;
      settled = true;
      const lines = settle(kernel.config.keelHome, kernel.protected);
      if (lines.length) kernel.log('warn', `sandbox: settled the unchecked commands of a Keel that was killed:\n${lines.map((l) => `- ${l}`).join('\n')}`, 'sandbox');
    };
    if (kernel.config.keelHome && existsSync(path.join(kernel.config.keelHome, 'sandbox-runs'))) kernel.hooks.sessionStart.tapPromise('sandbox', async () => settleOnce());

    const settings = (): SandboxConfig => (kernel.config.sandbox as SandboxConfig | undefined) ?? {};
    const check = () => {
      if (availability) return availability;
      const bwrap = opts.bwrap ?? findOnPath('bwrap');
      if (!bwrap) availability = { problem: 'bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)' };
      else {
        const failure = probe(bwrap);
        availability = failure ? { problem: `bubblewrap cannot create a sandbox here: ${failure}` } : { bwrap };
      }
      return availability;
    };
    const proxySocket = (allowed: string[]): Promise<string> => {
      proxy ??= (async () => {
        const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-proxy-'));
        removeAtExit(dir);
        const socket = path.join(dir, 'proxy.sock');
        // Behind a proxy (HTTPS_PROXY, HTTP_PROXY), what the sandbox lets through goes on through it.
        await startProxy(socket, allowed, await kernel.services.get('network')?.load());
        return socket;
      })();
      return proxy;
    };
    const service: Services['sandbox'] = {
      async wrap({ command, cwd, session }) {
        const config = settings();
        if (!config.enabled) return null;
        const { bwrap, problem } = check();
        if (!bwrap) {
          if (!warned) kernel.log('warn', `sandbox: ${problem}; ${config.allowUnsandboxed ? 'bash runs unsandboxed (sandbox.allowUnsandboxed)' : 'bash commands are refused until it is installed, sandbox.enabled is false, or sandbox.allowUnsandboxed is true'}`, 'sandbox');
          warned = true;
          if (config.allowUnsandboxed) return null;
          throw new Error(`sandbox: ${problem}. Set sandbox.allowUnsandboxed: true to run without it, or sandbox.enabled: false`);
        }
        const own = sessionSandbox(session);
        const root = real(session.projectRoot);
        const surface = kernel.protected;
        // allowWrite never opens a protected path, and a project inside one (KEEL_HOME, /etc) stays read-only.
        const allowWrite = (config.allowWrite ?? [])
          .map((p) => real(path.resolve(root, p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p)))
          .filter((p) => !surface.match(p, 'write'));
        const projectWritable = !surface.match(root, 'write');
        const roots = [...(projectWritable ? [root] : []), ...allowWrite];
        const allowed = config.network?.allowedDomains ?? [];
        const env: Record<string, string> = { TMPDIR: own.tmpDir, KEEL_SANDBOX: '1' };
        const sockets: string[] = [];
        let run = ['bash', '-c', command];
        if (allowed.length > 0) {
          const socket = await proxySocket(allowed);
          sockets.push(path.dirname(socket));
          const url = `http://127.0.0.1:${BRIDGE_PORT}`;
          Object.assign(env, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: '', no_proxy: '' });
          run = [bridgeNode(), '-e', BRIDGE, socket, String(BRIDGE_PORT), ...run];
        }
        const { hidden, readable } = secrets(surface.list());
        // Node runs the network bridge inside the sandbox: its binary stays visible where it lives (also under /tmp).
        if (allowed.length > 0) readable.push(bridgeNode());
        // Inside the hidden KEEL_HOME, this session's saved tool outputs stay readable; no other session's.
        if (kernel.config.keelHome) readable.push(savedOutputDir(real(kernel.config.keelHome), session.id));
        settleOnce();
        const found = survey(surface, root, roots);
        // Where this command starts, and where the session (and a sub-agent it starts) looks for config.
        const placeholders = placeholdersFor(surface, root, [real(cwd), real(session.cwd)], roots);
        for (const p of placeholders) holding.set(p, (holding.get(p) ?? 0) + 1);
        // Placeholders of other Keels (a sub-agent started meanwhile) found as empty folders: held here too
        // (they are read-only mounts in this command like any existing protected path), never taken for its own.
        const home = kernel.config.keelHome;
        const borrowed = home ? [...heldByOthers(home)].filter((p) => found.records.has(p) && isEmptyDir(p)) : [];
        for (const p of borrowed) found.records.delete(p);
        // Their folders below the root are pinned, so none can be renamed away to make a fresh one in its place.
        const pins = new Set(found.pinned);
        for (const p of placeholders) for (let dir = path.dirname(p); dir !== root && dir.startsWith(root + path.sep); dir = path.dirname(dir)) pins.add(dir);
        found.pinned = [...pins];
        // Commands that overlap compare against the state before the first of them, so none takes another's
        // unfinished change for the starting point.
        const before = live[0] ?? found.records;
        live.push(before);
        const { args } = bwrapArgs({
          projectRoot: root,
          projectWritable,
          tmpDir: own.tmpDir,
          cwd,
          allowWrite,
          env,
          sockets,
          readOnly: found.readOnly,
          pinned: found.pinned,
          writable: found.writable,
          hidden,
          readable,
          placeholders,
          emptyDir: placeholders.length ? emptyDir() : '',
        });
        const done = journal(kernel.config.keelHome, { root, roots, placeholders: [...placeholders, ...borrowed], before });
        let finished: Promise<string | undefined> | undefined;
        const finish = async (): Promise<string | undefined> => {
          uncheck(once);
          live.splice(live.indexOf(before), 1);
          done();
          const others = home ? heldByOthers(home) : new Set<string>();
          for (const p of placeholders) {
            const left = (holding.get(p) ?? 1) - 1;
            if (left > 0) holding.set(p, left);
            else holding.delete(p);
          }
          // The last holder anywhere removes a placeholder (only while it is still an empty folder).
          for (const p of [...placeholders, ...borrowed]) if (!holding.has(p) && !others.has(p)) removePlaceholder(p);
          const after = survey(surface, root, roots, found);
          // Placeholders (this Keel's or another's, held or just removed) are no change the command made.
          const base = new Map(before);
          for (const p of new Set([...placeholders, ...borrowed, ...holding.keys(), ...others])) {
            const was = base.get(p);
            if ((was === undefined || was.kind === 'dir') && (!after.records.has(p) || isEmptyDir(p))) {
              base.delete(p);
              after.records.delete(p);
            }
          }
          const changes = compare(base, after.records);
          const notes: string[] = [];
          if (changes.length > 0) {
            const { lines, failed } = revert(changes, base, roots);
            kernel.log('warn', `sandbox: reverted ${lines.length} change(s) to protected paths${failed.length ? `; could not revert ${failed.join('; ')}` : ''}`, 'sandbox');
            notes.push(
              'The Keel sandbox undid what this command did to protected paths (they configure Keel, git or the shell; only the user changes them, outside the sandbox):',
              ...lines.map((l) => `- ${l}`),
              ...failed.map((f) => `- NOT restored: ${f}`),
            );
          }
          return notes.length ? notes.join('\n') : undefined;
        };
        const once = () => (finished ??= finish());
        unchecked.add(once);
        checkAtExit();
        return { file: bwrap, args: [...args, '--', ...run], finish: once };
      },
    };
    kernel.services.provide('sandbox', service);

    // Keel's own write tools may change a protected path (the user was asked) while a sandboxed command runs
    // (one in the background): that is the new starting point, not something for the command's check to undo.
    kernel.hooks.event.tap('sandbox', (event) => {
      if (event.type !== 'tool_end' || live.length === 0 || event.result.isError) return;
      const tool = kernel.tools.get(event.call.name);
      if (!tool || tool.permission !== 'write' || !tool.paths) return;
      let written: string[];
      try {
        written = tool.paths(event.call.input);
      } catch {
        return;
      }
      const base = kernel.config.cwd || process.cwd();
      for (const p of written) {
        const abs = real(path.resolve(base, p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p));
        for (const baseline of new Set(live)) accept(baseline, abs);
      }
    });
    const accept = (baseline: Map<string, Guarded>, abs: string) => {
      for (const key of [...baseline.keys()]) if (key === abs || key.startsWith(abs + path.sep)) baseline.delete(key);
      const now = recordOf(kernel.protected, abs);
      if (now) baseline.set(abs, now);
      // Protected folders the tool made on the way (`.keel/agents/` for a new agent file).
      for (let dir = path.dirname(abs); dir !== path.dirname(dir); dir = path.dirname(dir)) {
        if (baseline.has(dir)) continue;
        const made = recordOf(kernel.protected, dir);
        if (made) baseline.set(dir, made);
      }
    };
  },
}));

function real(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * Read-protected path entries (`$KEEL_HOME`, `~/.ssh`) are hidden inside the sandbox (an empty read-only
 * folder, or an empty file); the parts their entries leave readable are mounted back.
 */
function secrets(entries: readonly ProtectedEntry[]): { hidden: Array<{ path: string; dir: boolean }>; readable: string[] } {
  const hidden: Array<{ path: string; dir: boolean }> = [];
  const readable: string[] = [];
  for (const entry of entries) {
    if (!entry.read || entry.path === undefined || !existsSync(entry.path)) continue;
    const dir = statSync(entry.path).isDirectory();
    hidden.push({ path: entry.path, dir });
    if (!dir) continue;
    for (const e of entry.except ?? []) if (e.access !== 'write') readable.push(path.join(entry.path, e.path));
  }
  return { hidden, readable };
}

function sessionSandbox(session: Session): SessionSandbox {
  let own = session.data.get(KEY) as SessionSandbox | undefined;
  if (!own) {
    own = { tmpDir: real(mkdtempSync(path.join(os.tmpdir(), 'keel-sandbox-'))) };
    removeAtExit(own.tmpDir);
    session.data.set(KEY, own);
  }
  return own;
}

/** The Node that runs the sandbox's network bridge, by its real path (what the sandbox mounts). */
function bridgeNode(): string {
  return realpathSync(process.execPath);
}
