import { readFileSync, statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import toolBash from '../../../plugins/tool-bash/index.js';
import { existingShells, killAll, shellTable } from '../../../plugins/tool-bash/background.js';
import { harness, textOf, type Harness } from '../tools-fs/harness.js';
import { until } from '../../helpers/until.js';

let h: Harness | undefined;
afterEach(() => {
  if (h) {
    const table = shellTable(h.session);
    killAll(table);
    table.detach?.();
    h.cleanup();
  }
  h = undefined;
});

describe('background shells (in process)', () => {
  it('keeps unread output in a bounded buffer and the whole of it in a private log file', async () => {
    h = await harness([toolBash({ outputLimit: 200 })]);
    const started = await h.run('bash', { command: 'for i in $(seq 1 500); do echo "line $i"; done', run_in_background: true });
    expect(textOf(started)).toMatch(/^Started in the background as bash_1/);
    const [shell] = existingShells(h.session);
    await until(() => !shell!.running, 'the shell to finish');
    const out = textOf(await h.run('bash_output', { shell_id: 'bash_1' }));
    expect(out).toMatch(/line 500\n\[\d+ earlier characters did not fit in the buffer and were dropped from this read; the whole output is in .*bash_1\.log\]\n\[bash_1 exited with code 0\]$/);
    expect(out).not.toContain('line 1\n');
    const log = readFileSync(shell!.logFile, 'utf8');
    expect(log.split('\n').filter(Boolean)).toHaveLength(500);
    expect(statSync(shell!.logFile).mode & 0o777).toBe(0o600);
    expect(shell!.logFile.startsWith(h.ws.home)).toBe(true);
    expect(textOf(await h.run('bash_output', { shell_id: 'bash_1' }))).toBe('(no new output)\n[bash_1 exited with code 0]');
    expect(textOf(await h.run('kill_shell', { shell_id: 'bash_1' }))).toBe('bash_1 is no longer running (exited with code 0).');
  });

  it('numbers shells per session, reports a failing exit code, and /bashes lists and kills them', async () => {
    h = await harness([toolBash()]);
    await h.run('bash', { command: 'echo oops; exit 3', run_in_background: true });
    await h.run('bash', { command: 'sleep 30', run_in_background: true });
    const [first, second] = existingShells(h.session);
    expect([first!.id, second!.id]).toEqual(['bash_1', 'bash_2']);
    await until(() => !first!.running, 'the first shell to finish');
    expect(textOf(await h.run('bash_output', { shell_id: 'bash_1' }))).toBe('oops\n[bash_1 exited with code 3]');
    const bashes = h.kernel.commands.get('bashes')!;
    const ctx = { kernel: h.kernel, session: h.session, print: () => undefined, signal: new AbortController().signal };
    const list = String(await bashes.run('', ctx));
    expect(list).toMatch(/^bash_1 {2}exited with code 3 +pid \d+ +\d+s {2}echo oops; exit 3\nbash_2 {2}running +pid \d+ +\d+s {2}sleep 30$/);
    expect(await bashes.run('kill bash_2', ctx)).toBe('Killed bash_2.');
    await until(() => !second!.running, 'the second shell to finish');
    expect(String(await bashes.run('', ctx))).toContain('bash_2  killed');
    await expect(bashes.run('stop', ctx)).rejects.toThrow('unknown argument "stop"');
    const other = await h.newSession();
    expect(textOf(await h.run('bash', { command: 'true', run_in_background: true }, { session: other }))).toMatch(/as bash_1 /);
    const otherTable = shellTable(other);
    killAll(otherTable);
    otherTable.detach?.();
  });
});
