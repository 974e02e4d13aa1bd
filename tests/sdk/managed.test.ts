/** An in-process SDK host (`query()`) ranks below managed settings, as flags do. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { query } from '../../sdk/index.js';
import { say } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();
const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function managedDir(settings: object): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'keel-managed-sdk-'));
  temps.push(dir);
  writeFileSync(path.join(dir, 'managed-settings.json'), JSON.stringify(settings));
  return dir;
}

async function drain(iterable: AsyncIterable<unknown>): Promise<void> {
  for await (const _message of iterable) {
    // consumed
  }
}

describe('query() under managed settings', () => {
  it("pins the model over the host's option and refuses a bypass mode the policy disables", async () => {
    const { env, ws, server } = await prepare([say('hi')]);
    const dir = managedDir({ model: 'claude-managed-model', permissions: { disableBypassPermissionsMode: 'disable' } });
    const hostEnv = { ...env, KEEL_MANAGED_SETTINGS_DIR: dir };
    await drain(query({ prompt: 'go', options: { cwd: ws.dir, env: hostEnv, model: 'claude-host-model' } }));
    expect(server.messageRequests()[0]!.body.model).toBe('claude-managed-model');
    await expect(drain(query({ prompt: 'go', options: { cwd: ws.dir, env: hostEnv, permissionMode: 'bypassPermissions' } }))).rejects.toThrow(
      `permissionMode: the bypassPermissions (auto) permission mode is disabled by managed settings (disableBypassPermissionsMode in ${path.join(dir, 'managed-settings.json')})`,
    );
    expect(server.messageRequests()).toHaveLength(1);
  });
});
