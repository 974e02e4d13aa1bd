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
  },
}));
