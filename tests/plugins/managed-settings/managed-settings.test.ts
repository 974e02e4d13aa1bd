/** The managed-settings plugin holds the mode and model a session is switched to later (a UI's mode cycle). */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createKernel, defaultConfig, runAgent, startSession, type ManagedPolicy, type Plugin, type Question } from '../../../kernel/index.js';
import managedSettings from '../../../plugins/managed-settings/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let server: ScriptedServer | undefined;
let ws: Workspace | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
});

const POLICY: ManagedPolicy = {
  files: ['/etc/keel/managed-settings.json'],
  disableBypassPermissionsMode: '/etc/keel/managed-settings.json',
  model: { value: 'claude-managed-model', file: '/etc/keel/managed-settings.json' },
  allowedMcpServers: [],
  deniedMcpServers: [],
};

async function run(managed: ManagedPolicy | undefined) {
  server = await startAnthropicServer([callTool('write_file', { path: 'a.txt', content: 'x' }), say('done')]);
  ws = makeWorkspace();
  const asked: Question[] = [];
  const frontend: Plugin = { name: 'test-frontend', kernel: '^1.0.0', apply: (k) => k.hooks.askUser.tapPromise('test-frontend', async (q) => (asked.push(q), { kind: 'permission', choice: 'deny' })) };
  const config = defaultConfig({ apiKey: 'k', baseURL: server.url, cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home, permissionMode: 'ask' });
  const kernel = createKernel({ config: managed ? { ...config, managed } : config });
  for (const p of [queryAnthropic(), permissions(), toolsFs(), frontend, managedSettings()]) kernel.use(p);
  kernel.seal();
  const session = await startSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
  // What a UI's mode cycle or an SDK host does after the start.
  session.permissionMode = 'auto';
  session.model = 'claude-other-model';
  await runAgent(kernel, session, 'write it');
  return { session, asked, wrote: existsSync(ws.path('a.txt')), models: server.messageRequests().map((r) => r.body.model) };
}

describe('managed-settings plugin', () => {
  it('puts a session switched to auto back in ask mode before the call is judged, and keeps the pinned model', async () => {
    const held = await run(POLICY);
    expect(held.session.permissionMode).toBe('ask');
    expect(held.asked).toHaveLength(1);
    expect(held.wrote).toBe(false);
    expect(held.models).toEqual(['claude-managed-model', 'claude-managed-model']);
  });

  it('changes nothing without managed settings (the switch above is what it undoes)', async () => {
    const free = await run(undefined);
    expect(free.session.permissionMode).toBe('auto');
    expect(free.asked).toHaveLength(0);
    expect(free.wrote).toBe(true);
    expect(free.models).toEqual(['claude-other-model', 'claude-other-model']);
  });
});
