import { askModel, definePlugin, type QueryService } from '../../kernel/index.js';

/**
 * Offers the `query` service: call a model by tier through the `query` hook. `main` uses the session's
 * model, `small` its small model; small calls never stream to the UI (the provider accounts them apart).
 */
export default definePlugin(() => ({
  name: 'query-service',
  kernel: '^1.0.0',
  apply(kernel) {
    const service: QueryService = { ask: (request, turn) => askModel(kernel, request, turn) };
    kernel.services.provide('query', service);

    kernel.commands.register({
      name: 'model',
      description: 'show the main and small models of this session; /model <name> switches the main model, /model small <name> the small one',
      async run(args, ctx) {
        const [first = '', second] = args.trim().split(/\s+/).filter(Boolean);
        // Claude Code's aliases (`sonnet`, `opus[1m]`) through the provider's one table, when it offers it.
        const aliases = ctx.kernel.services.get('model-aliases') as { resolve(name: string): string } | undefined;
        const resolve = (name: string) => {
          const id = aliases?.resolve(name) ?? name;
          return { id, shown: id === name ? name : `${id} (${name})` };
        };
        if (!first) return `Model: ${ctx.session.model}\nSmall model: ${ctx.session.smallModel}`;
        if (first === 'small') {
          if (!second) throw new Error('/model small: name the model, e.g. /model small claude-haiku-5-5');
          const small = resolve(second);
          ctx.session.smallModel = small.id;
          return `Small model: ${small.shown}`;
        }
        if (second) throw new Error(`/model: expected one model name, got "${args.trim()}"`);
        const main = resolve(first);
        ctx.session.model = main.id;
        return `Model: ${main.shown}`;
      },
    });
  },
}));
