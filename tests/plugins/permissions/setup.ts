/** Shared fixtures for the permissions tests: small tools of each level and a turn to ask with. */
import { z } from 'zod';
import { defineTool, type Decision, type Kernel, type Plugin, type ResolvedConfig, type Session, type Turn } from '../../../kernel/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import permissions from '../../../plugins/permissions/index.js';

const pathInput = z.object({ path: z.string() });

export const readTool = defineTool({
  name: 'read_file',
  description: 'read',
  permission: 'read',
  input: pathInput,
  paths: (i) => [i.path],
  execute: async () => ({ content: 'read' }),
});
export const writeTool = defineTool({
  name: 'write_file',
  description: 'write',
  permission: 'write',
  input: pathInput,
  paths: (i) => [i.path],
  execute: async () => ({ content: 'written' }),
});
export const bashTool = defineTool({
  name: 'bash',
  description: 'shell',
  permission: 'execute',
  input: z.object({ command: z.string(), workdir: z.string().optional() }),
  paths: (i) => (i.workdir ? [i.workdir] : []),
  execute: async () => ({ content: 'ran' }),
});
export const fetchTool = defineTool({
  name: 'web_fetch',
  description: 'fetch',
  permission: 'network',
  input: z.object({ url: z.string() }),
  execute: async () => ({ content: 'fetched' }),
});

/** A plugin registering the given tools. */
export function toolsPlugin(...tools: Array<ReturnType<typeof defineTool<any>>>): Plugin {
  return { name: 'test-tools', kernel: '^1.0.0', apply: (k) => tools.forEach((t) => k.tools.register(t)) };
}

export interface Harness {
  kernel: Kernel;
  session: Session;
  turn: Turn;
  decide(name: string, input: unknown): Promise<Decision | undefined>;
}

export async function harness(opts: { config?: Partial<ResolvedConfig>; session?: Partial<Session>; plugins?: Plugin[]; extraTools?: Array<ReturnType<typeof defineTool<any>>> } = {}): Promise<Harness> {
  const kernel = testKernel(
    [toolsPlugin(readTool, writeTool, bashTool, fetchTool, ...(opts.extraTools ?? [])), permissions(), ...(opts.plugins ?? [])],
    opts.config,
  );
  const session = await testSession(kernel, opts.session);
  const turn: Turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: (e) => kernel.emit(e) };
  let n = 0;
  return {
    kernel,
    session,
    turn,
    decide: (name, input) => {
      const tool = kernel.tools.get(name);
      const parsed = tool ? tool.input.parse(input) : input;
      return kernel.hooks.prePermission.promise({ id: `toolu_${++n}`, name, input: parsed }, turn);
    },
  };
}

export function rules(allow: string[] = [], ask: string[] = [], deny: string[] = []): Partial<ResolvedConfig> {
  return { permissions: { allow, ask, deny } };
}
