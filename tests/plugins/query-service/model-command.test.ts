import { describe, expect, it } from 'vitest';
import queryService from '../../../plugins/query-service/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';

describe('/model', () => {
  it('shows the models, switches the main one and the small one, and rejects two names', async () => {
    const kernel = testKernel([queryService()], { model: 'main-a', smallModel: 'small-a' });
    const session = await testSession(kernel);
    const command = kernel.commands.get('model')!;
    const run = (args: string) => command.run(args, { kernel, session, print: () => undefined, signal: new AbortController().signal });
    expect(await run('')).toBe('Model: main-a\nSmall model: small-a');
    expect(await run('main-b')).toBe('Model: main-b');
    expect(await run('small small-b')).toBe('Small model: small-b');
    expect([session.model, session.smallModel]).toEqual(['main-b', 'small-b']);
    await expect(run('one two')).rejects.toThrow('/model: expected one model name, got "one two"');
    await expect(run('small')).rejects.toThrow('/model small: name the model');
  });

  it("resolves Claude Code's aliases through the provider's table when one is offered", async () => {
    const aliases = { name: 'aliases', kernel: '^1.0.0', apply: (k: import('../../../kernel/index.js').Kernel) => k.services.provide('model-aliases', { table: { sonnet: 'claude-sonnet-x' }, resolve: (n: string) => (n === 'sonnet' ? 'claude-sonnet-x' : n) }) };
    const kernel = testKernel([aliases, queryService()], { model: 'main-a', smallModel: 'small-a' });
    const session = await testSession(kernel);
    const run = (args: string) => kernel.commands.get('model')!.run(args, { kernel, session, print: () => undefined, signal: new AbortController().signal });
    expect(await run('sonnet')).toBe('Model: claude-sonnet-x (sonnet)');
    expect(session.model).toBe('claude-sonnet-x');
    expect(await run('other-model')).toBe('Model: other-model');
  });
});
