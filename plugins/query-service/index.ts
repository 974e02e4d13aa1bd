import { definePlugin, KeelError, type QueryRequest, type QueryService } from '../../kernel/index.js';

/**
 * Offers the `query` service: call a model by tier through the `query` hook. `main` uses the session's
 * model, `small` its small model; small calls never stream to the UI (the provider accounts them apart).
 */
export default definePlugin(() => ({
  name: 'query-service',
  kernel: '^1.0.0',
  apply(kernel) {
    const service: QueryService = {
      async ask(request, turn) {
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
      },
    };
    kernel.services.provide('query', service);
  },
}));
