/** A kernel wired to a scripted Anthropic server: retry (fake clock), query-anthropic, usage, a counting tool. */
import { z } from 'zod';
import { definePlugin, defineTool, type AgentEvent, type Kernel, type Plugin, type ResolvedConfig } from '../../../kernel/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import queryRetry from '../../../plugins/query-retry/index.js';
import usage from '../../../plugins/usage/index.js';
import { testKernel } from '../../helpers/kernel.js';
import { FakeClock } from '../query-retry/fake-clock.js';

export interface Harness {
  kernel: Kernel;
  clock: FakeClock;
  events: AgentEvent[];
  /** Inputs the `note` tool ran with, in order. */
  toolRuns: unknown[];
  of<T extends AgentEvent['type']>(type: T): Array<Extract<AgentEvent, { type: T }>>;
}

/** Allows every tool and registers `note` (read-only; records each run) and `look`. */
export const toolbox = (runs: unknown[]): Plugin =>
  definePlugin(() => ({
    name: 'toolbox',
    kernel: '^1.0.0',
    apply(kernel) {
      kernel.hooks.prePermission.tapPromise('toolbox', async () => ({ behavior: 'allow' }));
      kernel.tools.register(
        defineTool({
          name: 'note',
          description: 'Record a note.',
          permission: 'read',
          input: z.object({ text: z.string() }),
          async execute(input) {
            runs.push(input);
            return { content: `noted ${input.text}` };
          },
        }),
      );
      kernel.tools.register(
        defineTool({
          name: 'look',
          description: 'Look at a path.',
          permission: 'read',
          input: z.object({ path: z.string() }),
          async execute(input) {
            return { content: `looked at ${input.path}` };
          },
        }),
      );
    },
  }))();

export function harness(url: string, opts: { clock?: FakeClock; config?: Partial<ResolvedConfig>; extra?: Plugin[] } = {}): Harness {
  const clock = opts.clock ?? new FakeClock();
  const events: AgentEvent[] = [];
  const toolRuns: unknown[] = [];
  const recorder = definePlugin(() => ({
    name: 'recorder',
    kernel: '^1.0.0',
    apply(kernel) {
      kernel.hooks.event.tap('recorder', (event) => void events.push(event));
    },
  }))();
  const kernel = testKernel(
    [recorder, queryRetry({ clock }), queryAnthropic({ baseURL: url }), usage(), toolbox(toolRuns), ...(opts.extra ?? [])],
    opts.config,
  );
  return {
    kernel,
    clock,
    events,
    toolRuns,
    of: (type) => events.filter((e) => e.type === type) as never,
  };
}
