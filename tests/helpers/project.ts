/** A scripted Anthropic server plus a temp project and KEEL_HOME, cleaned up after each test. */
import { afterEach } from 'vitest';
import { startAnthropicServer, type ScriptedServer, type ScriptStep, type ServerOptions } from './anthropic-server.js';
import { makeWorkspace, type Workspace } from './workspace.js';

export interface ScriptedProject {
  server: ScriptedServer;
  ws: Workspace;
  /** The environment a spawned keel needs to reach the server, with an isolated KEEL_HOME. */
  env: Record<string, string>;
}

/** Call at module level; the returned function starts a project for one test. */
export function useScriptedProjects(): (script?: ScriptStep[], options?: ServerOptions) => Promise<ScriptedProject> {
  const live: ScriptedProject[] = [];
  afterEach(async () => {
    for (const project of live.splice(0)) {
      await project.server.close();
      project.ws.cleanup();
    }
  });
  return async (script = [], options = {}) => {
    const server = await startAnthropicServer(script, options);
    const ws = makeWorkspace({ git: true });
    const project = { server, ws, env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: ws.home } };
    live.push(project);
    return project;
  };
}
