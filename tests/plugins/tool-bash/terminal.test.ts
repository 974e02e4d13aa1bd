/** The optional `terminal` service: a host (an editor) runs `bash` in its terminal; the shell's directory carries over. */
import { spawnSync } from 'node:child_process';
import { realpathSync, mkdirSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolBash, { type TerminalRunner, type TerminalRunSpec } from '../../../plugins/tool-bash/index.js';
import { splitMarker, terminalScript } from '../../../plugins/tool-bash/terminal.js';
import type { Plugin } from '../../../kernel/index.js';
import { harness, textOf, type Harness } from '../tools-fs/harness.js';

/** Runs the argv it gets to its end, as an editor's terminal would. */
class Terminal implements TerminalRunner {
  runs: TerminalRunSpec[] = [];
  on = true;
  handles() {
    return this.on;
  }
  async run(spec: TerminalRunSpec) {
    this.runs.push(spec);
    const done = spawnSync(spec.file, spec.args, { cwd: spec.cwd, encoding: 'utf8' });
    return { output: done.stdout, truncated: false, exitCode: done.status, signal: null, timedOut: false, aborted: false, fd3: '' };
  }
}

let h: Harness;
let terminal: Terminal;
beforeEach(async () => {
  terminal = new Terminal();
  const host: Plugin = { name: 'test-terminal', kernel: '^1.0.0', apply: (k) => k.services.provide('terminal', terminal) };
  h = await harness([host, toolBash()]);
});
afterEach(() => h.cleanup());

describe('the terminal service', () => {
  it('runs bash there, strips its directory marker and carries a cd over', async () => {
    mkdirSync(h.ws.path('sub'));
    const first = await h.run('bash', { command: 'echo hello; cd sub' });
    expect(textOf(first)).toContain('hello');
    expect(textOf(first)).not.toContain('__keel_cwd_');
    expect(textOf(first)).toContain(`The shell's working directory is now ${realpathSync(h.ws.path('sub'))}`);
    expect(textOf(await h.run('bash', { command: 'pwd' }))).toContain(realpathSync(h.ws.path('sub')));
    expect(terminal.runs).toHaveLength(2);
    expect(terminal.runs[0]).toMatchObject({ toolUseId: 'call_1', file: 'bash', timeoutMs: 30_000 });
  });

  it('reports the exit code, and is not used when it does not handle the session', async () => {
    expect(textOf(await h.run('bash', { command: 'exit 3' }))).toContain('Exit code: 3');
    terminal.on = false;
    expect(textOf(await h.run('bash', { command: 'echo local' }))).toContain('local');
    expect(terminal.runs).toHaveLength(1);
  });

  it('cuts long terminal output in the middle to the output limit, and strips colours', async () => {
    const result = await h.run('bash', { command: `printf '\\033[31mred\\033[0m\\n'; head -c 100000 /dev/zero | tr '\\0' 'x'; echo; echo the-end` });
    const out = textOf(result);
    expect(out.length).toBeLessThan(31_000);
    expect(out).toContain('output cut');
    expect(out.startsWith('red\n')).toBe(true);
    expect(out).toContain('the-end');
  });

  it('splitMarker takes the last marker line out of the output', () => {
    const { script, marker } = terminalScript('echo x');
    expect(script).toContain(marker);
    expect(splitMarker(`x\n${marker}/tmp/here\n`, marker)).toEqual({ output: 'x', cwd: '/tmp/here' });
    expect(splitMarker('no marker', marker)).toEqual({ output: 'no marker', cwd: '' });
  });
});
