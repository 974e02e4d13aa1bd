import { afterEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { recordSession } from '../../helpers/ui-fixtures.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import sessionStore from '../../../plugins/session-store/index.js';
import { realpathSync } from 'node:fs';

let ws: Workspace | undefined;
afterEach(() => ws?.cleanup());

describe('/status', () => {
  it('shows the session, its file, models, mode, folder, messages, context and cost', async () => {
    ws = makeWorkspace({ git: true });
    const id = await recordSession(ws, 1);
    const root = realpathSync(ws.dir);
    const kernel = testKernel([sessionStore({ fsync: false })], { keelHome: ws.home, cwd: root, projectRoot: root, model: 'm1', smallModel: 's1' });
    const session = await testSession(kernel, { resume: { id } });
    kernel.state.set({ contextTokens: 1000, contextWindow: 200_000, cost: 0.5 });
    const out = String(await kernel.commands.get('status')!.run('', { kernel, session, print: () => undefined, signal: new AbortController().signal }));
    expect(out).toContain(`Session: ${session.id}`);
    expect(out).toMatch(/File: .*\.jsonl/);
    expect(out).toContain('Model: m1 (small: s1)');
    expect(out).toContain('Permission mode: ask');
    expect(out).toContain(`Folder: ${root}`);
    expect(out).toContain('Messages: 2');
    expect(out).toContain('Context: 1000 / 200000 tokens (1%)');
    expect(out).toContain('Cost: $0.5000');
  });
});
