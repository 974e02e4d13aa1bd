import { describe, expect, it } from 'vitest';
import { definePlugin, type QueryRequest, type Turn } from '../../../kernel/index.js';
import queryService from '../../../plugins/query-service/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';

/** A provider that records what it was asked and answers with an empty message. */
const recordingProvider = (seen: QueryRequest[]) =>
  definePlugin(() => ({
    name: 'recording-provider',
    kernel: '^1.0.0',
    apply(kernel) {
      kernel.hooks.query.tapPromise('recording-provider', async (request) => {
        seen.push(request);
        return { model: request.model, content: [], stopReason: 'end_turn', usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } };
      });
    },
  }))();

async function setup(withProvider = true) {
  const seen: QueryRequest[] = [];
  const kernel = testKernel([...(withProvider ? [recordingProvider(seen)] : []), queryService()], { model: 'big-model', smallModel: 'small-model', maxTokens: 4096 });
  const session = await testSession(kernel);
  const controller = new AbortController();
  const turn: Turn = { kernel, session, index: 1, signal: controller.signal, data: new Map(), emit: (e) => kernel.emit(e) };
  return { kernel, seen, turn, service: kernel.services.require('query', 'test') };
}

describe('query service', () => {
  it('routes the main tier to session.model and lets it stream', async () => {
    const { seen, turn, service } = await setup();
    await service.ask({ tier: 'main', system: [], messages: [{ role: 'user', content: 'hi' }] }, turn);
    expect(seen[0]).toMatchObject({ tier: 'main', model: 'big-model', tools: [], maxTokens: 4096, stream: true });
    expect(seen[0].signal).toBe(turn.signal);
  });

  it('routes the small tier to session.smallModel and never streams it', async () => {
    const { seen, turn, service } = await setup();
    await service.ask({ tier: 'small', system: [], messages: [{ role: 'user', content: 'sum up' }], stream: true, maxTokens: 512 }, turn);
    expect(seen[0]).toMatchObject({ tier: 'small', model: 'small-model', stream: false, maxTokens: 512 });
  });

  it('keeps an explicit model', async () => {
    const { seen, turn, service } = await setup();
    await service.ask({ tier: 'small', model: 'other', system: [], messages: [] }, turn);
    expect(seen[0].model).toBe('other');
  });

  it('fails clearly when no provider answers', async () => {
    const { turn, service } = await setup(false);
    await expect(service.ask({ tier: 'small', system: [], messages: [] }, turn)).rejects.toThrow(/no provider answered the small query/);
  });
});
