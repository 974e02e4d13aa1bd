/** A real kernel (query-anthropic against the scripted server, the session store, an echo tool) per test. */
import { readFileSync } from 'node:fs';
import { definePlugin, defineTool, runAgent, z, type AgentEvent, type Kernel, type Plugin, type RunResult, type Session, type SessionInit } from '../../../kernel/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import permissions from '../../../plugins/permissions/index.js';
import sessionStore, { type SessionStoreOptions, type SessionStoreService } from '../../../plugins/session-store/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import type { ScriptedServer } from '../../helpers/anthropic-server.js';
import type { Workspace } from '../../helpers/workspace.js';

export const API_KEY = 'sk-ant-api03-SECRETSECRETSECRET-test';

/** `echo` returns its `text` input `times` times, so a script decides each tool output (and its size). */
const echoTool = defineTool({
  name: 'echo',
  description: 'returns its input',
  permission: 'read',
  input: z.object({ text: z.string(), times: z.number().int().positive().optional() }),
  execute: async ({ text, times }) => ({ content: text.repeat(times ?? 1) }),
});

const testTools = definePlugin(() => ({
  name: 'test-tools',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.tools.register(echoTool);
  },
}));

export interface Harness {
  kernel: Kernel;
  events: AgentEvent[];
  warnings(): string[];
  store: SessionStoreService;
  start(init?: Partial<SessionInit>): Promise<Session>;
  run(session: Session, prompt: string): Promise<RunResult>;
}

export function harness(server: ScriptedServer, ws: Workspace, opts: SessionStoreOptions = {}, extra: Plugin[] = [], config: Record<string, unknown> = {}): Harness {
  const events: AgentEvent[] = [];
  const recorder = definePlugin(() => ({
    name: 'event-log',
    kernel: '^1.0.0',
    apply(kernel) {
      kernel.hooks.event.tap('event-log', (event) => void events.push(event));
    },
  }));
  const kernel = testKernel([queryAnthropic(), permissions(), testTools(), sessionStore({ fsync: false, ...opts }), recorder(), ...extra], {
    apiKey: API_KEY,
    baseURL: server.url,
    keelHome: ws.home,
    cwd: ws.dir,
    projectRoot: ws.dir,
    permissionMode: 'auto',
    ...config,
  });
  return {
    kernel,
    events,
    warnings: () => events.flatMap((e) => (e.type === 'log' && e.level === 'warn' ? [e.message] : [])),
    store: kernel.services.get('session-store') as SessionStoreService,
    start: (init = {}) => testSession(kernel, init),
    run: (session, prompt) => runAgent(kernel, session, prompt),
  };
}

/** The records of a session file, parsed. */
export function records(file: string): Array<Record<string, any>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>);
}
