/**
 * The set-up most e2e tests of the built CLI share: a scripted Anthropic server, a git workspace with its own
 * KEEL_HOME, and the environment that points keel at both. `scriptedProjects()` (called at module level) removes
 * what each test made after it, in reverse order, with anything else the test hands to `defer`.
 */
import { afterEach } from 'vitest';
import { startAnthropicServer, type ScriptStep, type ScriptedServer, type ServerOptions } from './anthropic-server.js';
import { makeWorkspace, type Workspace } from './workspace.js';

export interface ScriptedProject {
  server: ScriptedServer;
  ws: Workspace;
  env: { ANTHROPIC_BASE_URL: string; ANTHROPIC_API_KEY: string; KEEL_HOME: string };
}

export interface ScriptedProjects {
  /** A new server with `script` and a new workspace, both removed after the test. */
  project(script: ScriptStep[], options?: ServerOptions): Promise<ScriptedProject>;
  /** Runs `cleanup` after the test (before what was deferred earlier). */
  defer(...cleanup: Array<() => Promise<void> | void>): void;
}

export function scriptedProjects(): ScriptedProjects {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });
  const defer = (...cleanup: Array<() => Promise<void> | void>) => void cleanups.push(...cleanup);
  return {
    defer,
    async project(script, options) {
      const server = await startAnthropicServer(script, options);
      const ws = makeWorkspace({ git: true });
      defer(() => ws.cleanup(), () => server.close());
      return { server, ws, env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: ws.home } };
    },
  };
}
