/**
 * `keel acp` under managed settings that disable auto (bypassPermissions) mode: the editor is never offered it, a
 * session/set_mode asking for it is refused naming the managed file, and a call still asks.
 */
import { type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, say } from '../../helpers/anthropic-server.js';
import { rawAcp } from '../../helpers/acp-raw.js';
import { useScriptedProjects } from '../../helpers/project.js';

const prepare = useScriptedProjects();
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('keel acp and managed settings that disable auto mode', () => {
  it('offers no auto mode, refuses set_mode auto and bypassPermissions naming the file, and still asks before a command', async () => {
    const { ws, env } = await prepare([callTool('bash', { command: 'echo x > made.txt' }, 'toolu_bash'), say('ok')]);
    const dir = path.join(ws.home, 'managed');
    mkdirSync(dir);
    const file = path.join(dir, 'managed-settings.json');
    writeFileSync(file, JSON.stringify({ permissions: { disableBypassPermissionsMode: 'disable' } }));
    const acp = rawAcp(
      ws.dir,
      { ...env, KEEL_MANAGED_SETTINGS_DIR: dir },
      (m) => (m.method === 'session/request_permission' ? { result: { outcome: { outcome: 'selected', optionId: 'reject_once' } } } : { error: { code: -32601, message: 'no' } }),
      children,
    );
    await acp.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const { result } = await acp.request('session/new', { cwd: ws.dir, mcpServers: [] });
    expect(result.modes.availableModes.map((m: { id: string }) => m.id)).toEqual(['ask', 'edits', 'manual', 'plan']);
    for (const modeId of ['auto', 'bypassPermissions']) {
      expect((await acp.request('session/set_mode', { sessionId: result.sessionId, modeId })).error).toMatchObject({
        code: -32602,
        message: expect.stringContaining(`modeId: the auto (bypassPermissions) mode is disabled by managed settings (disableBypassPermissionsMode in ${file})`),
      });
    }
    expect((await acp.request('session/prompt', { sessionId: result.sessionId, prompt: [{ type: 'text', text: 'go' }] })).result).toEqual({ stopReason: 'end_turn' });
    expect(acp.messages.filter((m) => m.method === 'session/request_permission')).toHaveLength(1);
    expect(existsSync(path.join(ws.dir, 'made.txt'))).toBe(false);
    expect(acp.messages.filter((m) => m.params?.update?.sessionUpdate === 'current_mode_update').map((m) => m.params.update.currentModeId)).toEqual(['ask']);
    acp.child.stdin.end();
    expect(await acp.exited).toBe(0);
  });
});
