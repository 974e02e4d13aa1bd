/** keel/testing: a plugin run inside a real kernel with a scripted model, in process. */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, Stage } from '../../kernel/index.js';
import { testAgent, type TestAgent } from '../../testing/index.js';

let agent: TestAgent | undefined;
afterEach(async () => {
  await agent?.close();
  agent = undefined;
});

const refuseRm = definePlugin(() => ({
  name: 'refuse-rm',
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.hooks.prePermission.tapPromise({ name: 'refuse-rm', stage: Stage.EARLY }, async (call) => {
      const command = (call.input as { command?: unknown }).command;
      return call.name === 'bash' && typeof command === 'string' && /\brm\b/.test(command) ? { behavior: 'deny', reason: 'refuse-rm: no rm here' } : undefined;
    });
  },
}));

describe('testAgent', () => {
  it('runs a plugin under the minimal preset: its denial reaches the model, other calls run, requests are recorded', async () => {
    agent = await testAgent({
      plugins: [refuseRm()],
      permissionMode: 'auto',
      script: [{ tools: [{ name: 'bash', input: { command: 'rm -rf build' } }, { name: 'bash', input: { command: 'echo kept' } }] }, 'done'],
    });
    const result = await agent.run('clean up');
    expect(result).toMatchObject({ isError: false, result: 'done', numTurns: 2 });
    const [rm, echo] = agent.toolResults();
    expect(rm).toMatchObject({ isError: true, content: expect.stringContaining('refuse-rm: no rm here') });
    expect(echo?.isError).toBe(false);
    expect(JSON.stringify(echo?.content)).toContain('kept');
    expect(agent.model.requests).toHaveLength(2);
    expect(agent.model.requests[0]!.tools.map((t) => t.name)).toContain('bash');
    expect(agent.events.some((e) => e.type === 'text_delta' && e.text === 'done')).toBe(true);
  });

  it('answers permission questions as told: allow writes the file, deny and no answer leave it unwritten', async () => {
    const write = { tools: [{ name: 'write_file', input: { path: 'notes.txt', content: 'hello' } }] };
    for (const [answer, written] of [['allow', true], ['deny', false], [undefined, false]] as const) {
      agent = await testAgent({ script: [write, 'ok'], answer });
      await agent.run('write it');
      expect(existsSync(`${agent.dir}/notes.txt`)).toBe(written);
      if (written) expect(readFileSync(`${agent.dir}/notes.txt`, 'utf8')).toBe('hello');
      else expect(agent.toolResults()[0]?.isError).toBe(true);
      await agent.close();
      agent = undefined;
    }
  });

  it('passes a function of the request, and ends the run with an error naming the script when replies run out', async () => {
    agent = await testAgent({ script: [(request) => `you sent ${request.messages.length} message(s)`] });
    expect((await agent.run('one')).result).toBe('you sent 1 message(s)');
    const second = await agent.run('two');
    expect(second.isError).toBe(true);
    expect(second.error).toMatch(/scripted-model: the script has 1 replies, and request 2 asks for another/);
  });

  it('keeps KEEL_HOME and the project in temporary folders it removes, and refuses an unknown preset by name', async () => {
    agent = await testAgent({ preset: 'default', script: ['hi'] });
    const { dir, home } = agent;
    expect(home).not.toBe(process.env.KEEL_HOME);
    expect(agent.kernel.config.keelHome).toBe(home);
    await agent.run('hello');
    await agent.close();
    agent = undefined;
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(home)).toBe(false);
    await expect(testAgent({ preset: 'nope', script: [] })).rejects.toThrow('testAgent: preset: no built-in preset "nope" (known presets: default, headless, minimal, policy-strict, fleet-worker)');
  });
});
