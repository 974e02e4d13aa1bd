import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { definePlugin, type SandboxService, type Session } from '../../kernel/index.js';
import { bwrapArgs, findOnPath, probe } from './bwrap.js';
import { BRIDGE, BRIDGE_PORT, startProxy } from './proxy.js';

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
    // Temp dirs this kernel made, removed at exit; the exit listener is added with the first one, so kernels
    // that never sandbox a command add none.
    const cleanup: string[] = [];
    const removeLater = (dir: string) => {
      if (cleanup.length === 0) {
        process.once('exit', () => {
          for (const made of cleanup) rmSync(made, { recursive: true, force: true });
        });
      }
      cleanup.push(dir);
    };

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
        removeLater(dir);
        const socket = path.join(dir, 'proxy.sock');
        await startProxy(socket, allowed);
        return socket;
      })();
      return proxy;
    };
    const service: SandboxService = {
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
        const own = sessionSandbox(session, removeLater);
        const root = real(session.projectRoot);
        const allowWrite = (config.allowWrite ?? []).map((p) => real(path.resolve(root, p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p)));
        const allowed = config.network?.allowedDomains ?? [];
        const env: Record<string, string> = { TMPDIR: own.tmpDir, KEEL_SANDBOX: '1' };
        const sockets: string[] = [];
        let run = ['bash', '-c', command];
        if (allowed.length > 0) {
          const socket = await proxySocket(allowed);
          sockets.push(path.dirname(socket));
          const url = `http://127.0.0.1:${BRIDGE_PORT}`;
          Object.assign(env, { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, NO_PROXY: '', no_proxy: '' });
          run = [process.execPath, '-e', BRIDGE, socket, String(BRIDGE_PORT), ...run];
        }
        const args = bwrapArgs({ projectRoot: root, tmpDir: own.tmpDir, cwd, allowWrite, env, sockets });
        return { file: bwrap, args: [...args, '--', ...run] };
      },
    };
    kernel.services.provide('sandbox', service);
  },
}));

function real(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

function sessionSandbox(session: Session, removeLater: (dir: string) => void): SessionSandbox {
  let own = session.data.get(KEY) as SessionSandbox | undefined;
  if (!own) {
    own = { tmpDir: real(mkdtempSync(path.join(os.tmpdir(), 'keel-sandbox-'))) };
    removeLater(own.tmpDir);
    session.data.set(KEY, own);
  }
  return own;
}

