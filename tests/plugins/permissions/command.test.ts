import { afterEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { harness, rules, type Harness } from './setup.js';

let ws: Workspace | undefined;
afterEach(() => ws?.cleanup());

async function run(h: Harness, args: string): Promise<string> {
  const command = h.kernel.commands.get('permissions')!;
  return String(await command.run(args, { kernel: h.kernel, session: h.session, print: () => undefined, signal: new AbortController().signal }));
}

describe('/permissions', () => {
  it('shows the mode and the configured rules with their source', async () => {
    ws = makeWorkspace();
    const h = await harness({ config: { ...rules(['bash(npm test)'], [], ['web_fetch']), cwd: ws.dir, projectRoot: ws.dir, sources: { permissions: '/p/agent.config.ts' } } });
    const shown = await run(h, '');
    expect(shown).toContain('Permission mode: ask');
    expect(shown).toMatch(/deny:\n {2}web_fetch {2}\(\/p\/agent\.config\.ts\)/);
    expect(shown).toMatch(/allow:\n {2}bash\(npm test\) {2}\(\/p\/agent\.config\.ts\)/);
  });

  it('adds a rule for the session that the policy then applies, and removes it again', async () => {
    ws = makeWorkspace();
    const h = await harness({ config: { cwd: ws.dir, projectRoot: ws.dir } });
    expect((await h.decide('bash', { command: 'make lint' }))?.behavior).toBe('ask');
    expect(await run(h, 'allow bash(make lint)')).toBe('Added for this session: allow bash(make lint)');
    expect((await h.decide('bash', { command: 'make lint' }))?.behavior).toBe('allow');
    expect(await run(h, '')).toMatch(/allow:\n {2}bash\(make lint\) {2}\(this session\)/);
    expect(await run(h, 'remove bash(make lint)')).toBe('Removed: bash(make lint)');
    expect((await h.decide('bash', { command: 'make lint' }))?.behavior).toBe('ask');
  });

  it('switches the permission mode', async () => {
    const h = await harness();
    expect(await run(h, 'mode edits')).toBe('Permission mode: edits');
    expect(h.session.permissionMode).toBe('edits');
    expect(await run(h, 'mode plan')).toBe('Permission mode: plan');
    expect((await h.decide('write_file', { path: 'x.txt' }))?.behavior).toBe('deny');
    expect(await run(h, 'mode acceptEdits')).toBe('Permission mode: edits');
  });

  it('names what is wrong with a bad action, mode or rule', async () => {
    const h = await harness();
    await expect(run(h, 'mode yolo')).rejects.toThrow('/permissions mode: "yolo" is not a mode (auto, edits, ask, manual, plan)');
    await expect(run(h, 'allow')).rejects.toThrow('/permissions allow: name a rule');
    await expect(run(h, 'deny bash(')).rejects.toThrow('/permissions deny: invalid permission rule "bash("');
    await expect(run(h, 'remove nothing')).rejects.toThrow('/permissions remove: no session rule "nothing"');
    await expect(run(h, 'grant x')).rejects.toThrow('/permissions: unknown action "grant"');
  });
});
