/** An in-process kernel running the real loop against the scripted Anthropic server, with every tool allowed. */
import { z } from 'zod';
import {
  createKernel,
  defaultConfig,
  defineTool,
  startSession,
  type AgentEvent,
  type Kernel,
  type Plugin,
  type Session,
} from '../../../kernel/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import toolBash from '../../../plugins/tool-bash/index.js';
import toolSearch from '../../../plugins/tool-search/index.js';
import toolTodo from '../../../plugins/tool-todo/index.js';
import toolWeb from '../../../plugins/tool-web/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import type { Workspace } from '../../helpers/workspace.js';

export const allowAll: Plugin = {
  name: 'allow-all',
  kernel: '^1.0.0',
  apply: (kernel) => kernel.hooks.prePermission.tapPromise('allow-all', async () => ({ behavior: 'allow' })),
};

export const builtinTools = (): Plugin[] => [toolsFs(), toolBash(), toolWeb(), toolTodo(), toolSearch()];

/** A plugin registering `count` deferred tools; one of them, convert_temperature, is findable by keyword. */
export function manyDeferredTools(count: number): Plugin {
  return {
    name: 'many-deferred-tools',
    kernel: '^1.0.0',
    apply(kernel) {
      for (let i = 0; i < count - 1; i++) {
        kernel.tools.register(
          defineTool({
            name: `mcp__bulk__tool_${i}`,
            description: `Bulk test tool ${i}: manages widget ${i} in the inventory service.`,
            permission: 'read',
            input: z.object({ id: z.string() }),
            deferLoading: true,
            execute: async () => ({ content: `tool ${i}` }),
          }),
        );
      }
      kernel.tools.register(
        defineTool({
          name: 'convert_temperature',
          description: 'Converts a temperature between celsius and fahrenheit.',
          permission: 'read',
          input: z.object({ celsius: z.number() }),
          deferLoading: true,
          execute: async ({ celsius }) => ({ content: `${(celsius * 9) / 5 + 32} F` }),
        }),
      );
    },
  };
}

export interface LoopKernel {
  kernel: Kernel;
  session: Session;
  events: AgentEvent[];
}

export async function loopKernel(plugins: Plugin[], ws: Workspace, baseURL: string): Promise<LoopKernel> {
  const kernel = createKernel({
    config: defaultConfig({ apiKey: 'test-key', baseURL, cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home, model: 'claude-test', smallModel: 'claude-small' }),
  });
  const events: AgentEvent[] = [];
  kernel.use({ name: 'test-events', kernel: '^1.0.0', apply: (k) => k.hooks.event.tap('test-events', (e) => void events.push(e)) });
  kernel.use(queryAnthropic());
  kernel.use(allowAll);
  for (const plugin of plugins) kernel.use(plugin);
  kernel.seal();
  const session = await startSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'auto' });
  return { kernel, session, events };
}
