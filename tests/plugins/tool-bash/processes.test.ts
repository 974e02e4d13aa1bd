import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findTagged, reapTagged, settleStale, startTime, TAG_VARIABLE } from '../../../plugins/tool-bash/processes.js';
import { until } from '../../helpers/until.js';

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const f of cleanup.splice(0)) f();
});

/** Starts a double-forked setsid daemon carrying `tags`; resolves with its marker once it runs. */
async function daemon(tags: string): Promise<string> {
  const mark = `keelproc${Math.floor(Math.random() * 1e9)}`;
  spawnSync('bash', ['-c', `( setsid bash -c 'while :; do sleep 0.2; done' ${mark} >/dev/null 2>&1 </dev/null & )`], { env: { ...process.env, [TAG_VARIABLE]: tags } });
  cleanup.push(() => spawnSync('pkill', ['-KILL', '-f', mark]));
  await until(() => spawnSync('pgrep', ['-f', mark]).status === 0, 'the daemon');
  return mark;
}
const alive = (mark: string) => spawnSync('pgrep', ['-f', mark]).status === 0;

describe.skipIf(process.platform !== 'linux')('process tags', () => {
  it('finds and kills a double-forked daemon by its tag, and leaves others alone', async () => {
    const mine = await daemon('keel-1-aaaa,keel-1-aaaa/s/bash_1');
    const theirs = await daemon('keel-2-bbbb');
    expect(findTagged(new Set(['keel-1-aaaa/s/bash_1'])).length).toBeGreaterThan(0);
    expect(reapTagged(new Set(['keel-1-aaaa']))).toBeGreaterThan(0);
    await until(() => !alive(mine), 'the tagged daemon to die');
    expect(alive(theirs)).toBe(true);
  });

  it('settles the record of a Keel that is gone, and keeps that of one still running', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'keel-proc-'));
    cleanup.push(() => rmSync(home, { recursive: true, force: true }));
    const orphan = await daemon('keel-3-cccc');
    const live = await daemon('keel-4-dddd');
    const dir = path.join(home, 'processes');
    spawnSync('mkdir', ['-p', dir]);
    // A dead Keel: this very process's pid with a start time it never had (as after a pid was recycled).
    writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ pid: process.pid, start: '1', tag: 'keel-3-cccc' }));
    writeFileSync(path.join(dir, 'b.json'), JSON.stringify({ pid: process.pid, start: startTime('self'), tag: 'keel-4-dddd' }));
    writeFileSync(path.join(dir, 'c.json'), 'not json');
    expect(settleStale(home)).toBeGreaterThan(0);
    await until(() => !alive(orphan), 'the orphan to die');
    expect(alive(live)).toBe(true);
    expect(readdirSync(dir)).toEqual(['b.json']);
    expect(existsSync(path.join(dir, 'a.json'))).toBe(false);
  });
});
