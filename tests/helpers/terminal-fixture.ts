/**
 * The set-up of a UI test in one place: a temp workspace and KEEL_HOME, a scripted Anthropic server, and the built
 * keel in a tmux terminal on a private socket. `terminalFixture()` (called at module level, or in a `describe`)
 * tracks everything it made and removes it after each test, whether the test passed or threw: the terminals first
 * (so keel stops writing), then the servers, then the folders.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { startAnthropicServer, type ScriptStep, type ScriptedServer, type ServerOptions } from './anthropic-server.js';
import { runMarker } from './run-marker.js';
import { startKeelTerminal, type Terminal } from './tmux.js';
import { makeWorkspace, type Workspace } from './workspace.js';

/** A loopback port nothing listens on: a keel started without a scripted server can never reach a real API. */
const NO_SERVER = 'http://127.0.0.1:9';

export interface KeelTerminalOptions {
  /** The project keel runs in (its `dir` is the cwd, its `home` the KEEL_HOME). */
  ws: Workspace;
  /** The scripted server keel talks to; without one, a closed loopback port. */
  server?: ScriptedServer;
  args?: string[];
  width?: number;
  height?: number;
  history?: number;
  /** Over the defaults (KEEL_HOME, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL); `undefined` leaves a default out. */
  env?: Record<string, string | undefined>;
}

export interface StartOptions extends Omit<KeelTerminalOptions, 'ws' | 'server'> {
  /** Runs on the new workspace before the server and keel start (files, sessions, settings). */
  prepare?: (ws: Workspace) => void | Promise<void>;
  /** What the screen shows once keel is ready (default: the Ink footer's "ask mode"); `false` waits for nothing. */
  ready?: RegExp | string | false;
  serverOptions?: ServerOptions;
}

export interface KeelUi {
  ws: Workspace;
  server: ScriptedServer;
  term: Terminal;
}

export interface TerminalFixture {
  /** A workspace, a server with `script` and keel on a terminal, ready for input. */
  start(script?: ScriptStep[], opts?: StartOptions): Promise<KeelUi>;
  workspace(): Workspace;
  server(script?: ScriptStep[], options?: ServerOptions): Promise<ScriptedServer>;
  /** keel on a new terminal (a second one after the first has exited, to resume, say). */
  terminal(opts: KeelTerminalOptions): Terminal;
  /** A temp folder outside the workspace (canaries, recordings). */
  tempDir(prefix?: string): string;
  /** What afterEach runs; a test may call it to end everything early. */
  cleanup(): Promise<void>;
}

export function terminalFixture(): TerminalFixture {
  const terminals: Terminal[] = [];
  const servers: ScriptedServer[] = [];
  const folders: Array<() => void> = [];

  const fixture: TerminalFixture = {
    workspace() {
      const ws = makeWorkspace({ git: true });
      folders.push(() => ws.cleanup());
      return ws;
    },
    async server(script = [], options = {}) {
      const server = await startAnthropicServer(script, options);
      servers.push(server);
      return server;
    },
    terminal({ ws, server, env = {}, ...rest }) {
      const merged: Record<string, string | undefined> = { KEEL_HOME: ws.home, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: server?.url ?? NO_SERVER, ...env };
      const defined = Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
      const term = startKeelTerminal({ cwd: ws.dir, env: defined, ...rest });
      terminals.push(term);
      return term;
    },
    tempDir(prefix = 'keel-fixture-') {
      const dir = mkdtempSync(path.join(tmpdir(), `${prefix}${runMarker}-`));
      folders.push(() => rmSync(dir, { recursive: true, force: true }));
      return dir;
    },
    async start(script = [], { prepare, ready = /ask mode/, serverOptions, ...opts } = {}) {
      const ws = fixture.workspace();
      await prepare?.(ws);
      const server = await fixture.server(script, serverOptions);
      const term = fixture.terminal({ ws, server, ...opts });
      if (ready !== false) await term.waitFor(ready);
      return { ws, server, term };
    },
    async cleanup() {
      // Every step runs even when one before it fails; the first failure is reported after.
      const failures: unknown[] = [];
      for (const term of terminals.splice(0)) {
        try {
          term.kill();
        } catch (error) {
          failures.push(error);
        }
      }
      await Promise.all(servers.splice(0).map((s) => s.close().catch((error: unknown) => void failures.push(error))));
      for (const remove of folders.splice(0)) {
        try {
          remove();
        } catch (error) {
          failures.push(error);
        }
      }
      if (failures.length > 0) throw failures[0];
    },
  };
  afterEach(() => fixture.cleanup());
  return fixture;
}
