import { definePlugin, KeelError, type Kernel, type QueryRequest, type Services, type QueryResponse, type Turn } from '../../kernel/index.js';

/** A model call by tier: the model name, tools and `maxTokens` default to the session's and the config's. */
export type ModelAsk = Omit<QueryRequest, 'model' | 'tools' | 'maxTokens'> & Partial<Pick<QueryRequest, 'model' | 'tools' | 'maxTokens'>>;

declare module '../../kernel/types.js' {
  interface Services {
    /** Calls a model by tier (`main` or `small`) through the `query` hook, filling in the model name. */
    query: { ask(request: ModelAsk, turn: Turn): Promise<QueryResponse> };
  }
}

/**
 * Offers the `query` service: call a model by tier through the `query` hook. `main` uses the session's
 * model, `small` its small model; small calls never stream to the UI (the provider accounts them apart).
 */
export default definePlugin(() => ({
  name: 'query-service',
  kernel: '^1.0.0',
  apply(kernel) {
    const service: Services['query'] = { ask: (request, turn) => askModel(kernel, request, turn) };
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

/** `main` is the session's model, `small` its small model; small calls never stream to the UI. */
async function askModel(kernel: Kernel, request: ModelAsk, turn: Turn): Promise<QueryResponse> {
  const small = request.tier === 'small';
  const full: QueryRequest = {
    ...request,
    model: request.model ?? (small ? turn.session.smallModel : turn.session.model),
    tools: request.tools ?? [],
    maxTokens: request.maxTokens ?? kernel.config.maxTokens,
    signal: request.signal ?? turn.signal,
    stream: small ? false : (request.stream ?? true),
  };
  const response = await kernel.hooks.query.promise(full, turn);
  if (!response) {
    throw new KeelError(`no provider answered the ${request.tier} query: add a provider plugin (query-anthropic or query-openai) matching config \`provider\``);
  }
  return response;
}
