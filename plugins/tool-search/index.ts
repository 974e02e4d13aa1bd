import { z } from 'zod';
import { definePlugin, defineTool, Stage, type Kernel, type Session, type ToolDefinition, type ToolLoadContext } from '../../kernel/index.js';
import { firstSentence, searchTools } from './search.js';

export interface ToolSearchOptions {
  /** Deferred tool names listed in the system prompt at most (default 60). */
  listLimit?: number;
}

const NAME = 'tool-search';
const DEFAULT_RESULTS = 5;
/** Between `Stage.EARLY` (instructions) and `Stage.NORMAL` (memory index). */
const LIST_STAGE = Stage.EARLY / 2;

const input = z.object({
  query: z.string().min(1).describe('Keywords, or "select:name1,name2" to load tools by exact name'),
  max_results: z.number().int().min(1).max(10).optional().describe(`Default ${DEFAULT_RESULTS}`),
});

/**
 * The deferred tools loaded in this session. First built from the history, so a resumed session keeps the
 * deferred tools it had called (a fresh session's history holds no calls yet).
 */
function loadedSet(kernel: Kernel, session: Session): Set<string> {
  let loaded = session.data.get(NAME) as Set<string> | undefined;
  if (!loaded) {
    loaded = new Set();
    const deferred = new Set(deferredTools(kernel).map((t) => t.name));
    for (const message of session.messages) {
      if (message.role !== 'assistant' || typeof message.content === 'string') continue;
      for (const block of message.content) if (block.type === 'tool_use' && deferred.has(block.name)) loaded.add(block.name);
    }
    session.data.set(NAME, loaded);
  }
  return loaded;
}

/** Deferred tools other than tool_search itself. */
const deferredTools = (kernel: Kernel) => kernel.tools.list().filter((t) => t.deferLoading && t.name !== 'tool_search');

/** Deferred tools the model cannot call yet: neither loaded by a search nor switched on by their `loadWhen`. */
function unloaded(kernel: Kernel, ctx: ToolLoadContext): ToolDefinition[] {
  const loaded = loadedSet(kernel, ctx.session);
  return deferredTools(kernel).filter((t) => !loaded.has(t.name) && !(t.loadWhen?.(ctx) ?? false));
}

/**
 * Deferred loading: requests carry core tools, deferred tools whose `loadWhen` holds, and deferred tools that
 * `tool_search` loaded earlier in the session. `tool_search` itself is offered while something is left to load.
 */
export default definePlugin((opts: ToolSearchOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    const listLimit = opts.listLimit ?? 60;

    kernel.tools.register(
      defineTool({
        name: 'tool_search',
        description:
          'Load deferred tools. Some tools are not sent until needed; the system prompt lists their names. Search by keywords (matched against names and descriptions) or load exact names with "select:name1,name2". Loaded tools can be called from your next turn on, for the rest of the session.',
        permission: 'read',
        input,
        deferLoading: true,
        loadWhen: (ctx) => unloaded(kernel, ctx).length > 0,
        async execute(args, ctx) {
          const pool = deferredTools(kernel);
          const loaded = loadedSet(kernel, ctx.session);
          let found: ToolDefinition[];
          let missing: string[] = [];
          if (args.query.startsWith('select:')) {
            const names = args.query.slice('select:'.length).split(',').map((n) => n.trim()).filter(Boolean);
            found = pool.filter((t) => names.includes(t.name));
            missing = names.filter((n) => !found.some((t) => t.name === n));
          } else {
            found = searchTools(pool, args.query, args.max_results ?? DEFAULT_RESULTS);
          }
          for (const tool of found) loaded.add(tool.name);
          const lines: string[] = [];
          if (found.length) {
            lines.push(`Loaded ${found.length} ${found.length === 1 ? 'tool' : 'tools'}, callable from your next turn:`);
            for (const tool of found) lines.push(`- ${tool.name}: ${firstSentence(tool.description)}`);
          } else {
            lines.push(`No deferred tool matches "${args.query}".`);
          }
          if (missing.length) lines.push(`Not deferred tools: ${missing.join(', ')}.`);
          if (!found.length) lines.push(`Deferred tools: ${listNames(pool.map((t) => t.name), listLimit)}`);
          return { content: lines.join('\n'), display: { loaded: found.map((t) => t.name) } };
        },
      }),
    );

    kernel.hooks.selectTools.tapPromise({ name: NAME, stage: Stage.EARLY }, async (tools, turn) => {
      const loaded = loadedSet(kernel, turn.session);
      if (loaded.size === 0) return tools;
      const have = new Set(tools.map((t) => t.name));
      const extra: ToolDefinition[] = [];
      for (const name of loaded) {
        const tool = kernel.tools.get(name);
        if (tool && !have.has(name)) extra.push(tool);
      }
      return extra.length ? [...tools, ...extra] : tools;
    });

    // After the instructions (EARLY) and before the memory index (NORMAL, volatile): the list changes only when
    // deferred tools are registered or all of them are loaded, so it belongs in the cached system prefix.
    kernel.hooks.contextLoad.tapPromise({ name: NAME, stage: LIST_STAGE }, async (context, turn) => {
      if (unloaded(kernel, { session: turn.session, turn }).length === 0) return context;
      // All deferred names, loaded or not: loading one does not change the text.
      const names = deferredTools(kernel).map((t) => t.name);
      const text = `Deferred tools (load them with tool_search before calling them): ${listNames(names, listLimit)}`;
      return { ...context, system: [...context.system, { type: 'text', text }] };
    });
  },
}));

function listNames(names: string[], limit: number): string {
  const sorted = names.slice().sort();
  const shown = sorted.slice(0, limit).join(', ');
  return sorted.length > limit ? `${shown}, and ${sorted.length - limit} more (search by keyword)` : shown;
}
