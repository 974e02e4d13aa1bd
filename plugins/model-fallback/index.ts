/**
 * `--fallback-model`: when the main model stays overloaded (HTTP 529 / `overloaded_error`) after the provider's
 * retries, the request goes to the fallback model, and so does the rest of the session's main-loop requests. The
 * switch is logged (stderr in `-p`) and published as a `model_fallback` event.
 */
import { z } from 'zod';
import { definePlugin, KeelError, Stage, type QueryRequest } from '../../kernel/index.js';

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** The model the main loop switches to when the main model stays overloaded (`--fallback-model`). */
    fallbackModel?: string;
  }
}

declare module '../../kernel/types.js' {
  interface AgentEventMap {
    model_fallback: { from: string; to: string; reason: string };
  }
}

const NAME = 'model-fallback';

/** An overload anywhere in the error's cause chain: status 529 or Anthropic's `overloaded_error`. */
export function isOverloaded(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const shape = e as { status?: unknown; error?: { type?: unknown; error?: { type?: unknown } }; message?: unknown };
    if (shape.status === 529) return true;
    if (shape.error?.type === 'overloaded_error' || shape.error?.error?.type === 'overloaded_error') return true;
    if (typeof shape.message === 'string' && /\boverloaded_error\b/.test(shape.message)) return true;
  }
  return false;
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { fallbackModel: z.string().min(1) },
  apply(kernel) {
    const fallback = kernel.config.fallbackModel;
    if (!fallback) return;
    // Requests this tap re-issues pass through it untouched.
    const passing = new WeakSet<QueryRequest>();
    const send = (request: QueryRequest, turn: Parameters<typeof kernel.hooks.query.promise>[1]) => {
      passing.add(request);
      return kernel.hooks.query.promise(request, turn);
    };

    kernel.hooks.sessionStart.tapPromise(NAME, async (session) => {
      if (session.model === fallback) throw new KeelError(`--fallback-model: the fallback model "${fallback}" is the main model; name another one`, { code: 'config', exitCode: 2 });
    });

    kernel.hooks.query.tapPromise({ name: NAME, stage: Stage.EARLY }, async (request, turn) => {
      if (passing.has(request) || request.tier !== 'main') return undefined;
      if (turn.session.data.get(NAME) === fallback) return send({ ...request, model: fallback }, turn);
      try {
        return await send({ ...request }, turn);
      } catch (err) {
        if (!isOverloaded(err) || request.signal?.aborted) throw err;
        const reason = `${request.model} stayed overloaded after its retries`;
        turn.session.data.set(NAME, fallback);
        kernel.log('warn', `${reason}: switching to the fallback model ${fallback} (--fallback-model)`, NAME);
        turn.emit({ type: 'model_fallback', from: request.model, to: fallback, reason });
        return send({ ...request, model: fallback }, turn);
      }
    });
  },
}));
