/** Runs tools the way the loop does (zod-parsed input, a real ToolContext) against a temp workspace. */
import {
  createKernel,
  defaultConfig,
  startSession,
  type AgentEvent,
  type Kernel,
  type Plugin,
  type Session,
  type ToolResult,
} from '../../../kernel/index.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

export interface Harness {
  ws: Workspace;
  kernel: Kernel;
  session: Session;
  events: AgentEvent[];
  run(name: string, input: unknown, opts?: { signal?: AbortSignal; cwd?: string; session?: Session }): Promise<ToolResult>;
  newSession(): Promise<Session>;
  cleanup(): void;
}

export async function harness(plugins: Plugin[], opts: { git?: boolean; ws?: Workspace; config?: Record<string, unknown> } = {}): Promise<Harness> {
  const ws = opts.ws ?? makeWorkspace({ git: opts.git });
  const kernel = createKernel({ config: defaultConfig({ apiKey: 'test-key', cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home, ...opts.config }) });
  const events: AgentEvent[] = [];
  kernel.use({ name: 'test-events', kernel: '^1.0.0', apply: (k) => k.hooks.event.tap('test-events', (e) => void events.push(e)) });
  for (const plugin of plugins) kernel.use(plugin);
  kernel.seal();
  const newSession = () => startSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'auto' });
  const session = await newSession();
  let calls = 0;
  return {
    ws,
    kernel,
    session,
    events,
    newSession,
    async run(name, input, runOpts = {}) {
      const tool = kernel.tools.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      const parsed = tool.input.parse(input);
      const signal = runOpts.signal ?? new AbortController().signal;
      const s = runOpts.session ?? session;
      const call = { id: `call_${++calls}`, name, input: parsed };
      const turn = { session: s, kernel, index: 1, signal, data: new Map(), emit: (e: AgentEvent) => kernel.emit(e) };
      return tool.execute(parsed, { signal, session: s, turn, call, kernel, cwd: runOpts.cwd ?? s.cwd, emit: turn.emit });
    },
    cleanup: () => ws.cleanup(),
  };
}

/** The text of a result, whatever its shape. */
export function textOf(result: ToolResult): string {
  if (typeof result.content === 'string') return result.content;
  return result.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}
