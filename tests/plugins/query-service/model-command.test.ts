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
});
