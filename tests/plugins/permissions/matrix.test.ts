import { afterEach, describe, expect, it } from 'vitest';
import type { PermissionLevel, PermissionMode } from '../../../kernel/index.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { harness, rules } from './setup.js';

const CALLS: Record<PermissionLevel, [string, Record<string, string>]> = {
  read: ['read_file', { path: 'a.txt' }],
  write: ['write_file', { path: 'a.txt' }],
  execute: ['bash', { command: 'npm test' }],
  network: ['web_fetch', { url: 'https://example.com/' }],
};

const EXPECTED: Record<PermissionMode, Record<PermissionLevel, 'allow' | 'ask' | 'deny'>> = {
  auto: { read: 'allow', write: 'allow', execute: 'allow', network: 'allow' },
  edits: { read: 'allow', write: 'allow', execute: 'ask', network: 'ask' },
  ask: { read: 'allow', write: 'ask', execute: 'ask', network: 'ask' },
  manual: { read: 'ask', write: 'ask', execute: 'ask', network: 'ask' },
  plan: { read: 'allow', write: 'deny', execute: 'deny', network: 'deny' },
};

let ws: Workspace;
afterEach(() => ws?.cleanup());

describe('mode × level matrix', () => {
  for (const mode of Object.keys(EXPECTED) as PermissionMode[]) {
    for (const level of Object.keys(CALLS) as PermissionLevel[]) {
      it(`${mode} × ${level} → ${EXPECTED[mode][level]}`, async () => {
        ws = makeWorkspace();
        const h = await harness({ session: { permissionMode: mode, cwd: ws.dir, projectRoot: ws.dir } });
        const [name, input] = CALLS[level];
        const decision = await h.decide(name, input);
        expect(decision?.behavior).toBe(EXPECTED[mode][level]);
        if (decision?.behavior === 'ask') expect(decision.reason).toContain(mode);
        if (decision?.behavior === 'deny') expect(decision.reason).toContain('plan mode');
      });
    }
  }

  it('plan mode refuses a write even when an allow rule covers it', async () => {
    ws = makeWorkspace();
    const h = await harness({ session: { permissionMode: 'plan', cwd: ws.dir, projectRoot: ws.dir }, config: rules(['write_file', 'bash']) });
    for (const [name, input] of [CALLS.write, CALLS.execute]) {
      expect(await h.decide(name, input)).toEqual({ behavior: 'deny', reason: expect.stringContaining('exit_plan_mode') });
    }
  });

  it('an unknown tool is denied', async () => {
    ws = makeWorkspace();
    const h = await harness({ session: { cwd: ws.dir, projectRoot: ws.dir } });
    expect(await h.decide('nope', {})).toEqual({ behavior: 'deny', reason: expect.stringContaining('unknown tool nope') });
  });
});
