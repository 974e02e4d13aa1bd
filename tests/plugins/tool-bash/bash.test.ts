import { mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import toolBash from '../../../plugins/tool-bash/index.js';
import { MAX_PENDING } from '../../../plugins/tool-bash/output.js';
import type { Plugin } from '../../../kernel/index.js';
import { harness, textOf, type Harness } from '../tools-fs/harness.js';
import { until } from '../../helpers/until.js';

let h: Harness;
const started: number[] = [];
beforeEach(async () => {
  h = await harness([toolBash()]);
});
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  h.cleanup();
});

/** A process is gone once /proc has no entry for it or it is a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const pidFrom = (file: string) => Number(readFileSync(h.ws.path(file), 'utf8').trim());

describe('bash', () => {
  it('returns output and reports a non-zero exit code', async () => {
    const ok = await h.run('bash', { command: 'echo hello' });
    expect(textOf(ok)).toBe('hello');
    expect(ok.display).toMatchObject({ exitCode: 0 });
    const failed = await h.run('bash', { command: 'echo oops; exit 3' });
    expect(textOf(failed)).toBe('oops\nExit code: 3');
    expect(failed.isError).toBeFalsy();
  });

  it('keeps the order of stdout and stderr', async () => {
    const result = await h.run('bash', { command: 'echo one; echo two >&2; echo three; echo four >&2' });
    expect(textOf(result)).toBe('one\ntwo\nthree\nfour');
  });

  it('keeps the working directory between calls and says when it leaves the project', async () => {
    mkdirSync(h.ws.path('sub/inner'), { recursive: true });
    const cd = await h.run('bash', { command: 'cd sub' });
    expect(textOf(cd)).toContain(`The shell's working directory is now ${realpathSync(h.ws.path('sub'))}.`);
    expect(textOf(await h.run('bash', { command: 'pwd' }))).toBe(realpathSync(h.ws.path('sub')));
    const exit = await h.run('bash', { command: 'cd inner && exit 4' });
    expect(textOf(exit)).toContain('Exit code: 4');
    expect(textOf(await h.run('bash', { command: 'pwd' }))).toBe(realpathSync(h.ws.path('sub/inner')));
    const out = await h.run('bash', { command: 'cd /' });
    expect(textOf(out)).toContain(`The shell's working directory is now /, outside the project root ${realpathSync(h.ws.dir)}.`);
    const other = await h.newSession();
    expect(textOf(await h.run('bash', { command: 'pwd' }, { session: other }))).toBe(realpathSync(h.ws.dir));
  });

  it('runs one command in workdir without moving the shell, and rejects a missing workdir', async () => {
    mkdirSync(h.ws.path('w'));
    expect(textOf(await h.run('bash', { command: 'pwd', workdir: 'w' }))).toBe(realpathSync(h.ws.path('w')));
    expect(textOf(await h.run('bash', { command: 'pwd' }))).toBe(realpathSync(h.ws.dir));
    const missing = await h.run('bash', { command: 'pwd', workdir: 'nope' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toBe(`bash: workdir ${h.ws.path('nope')} is not a folder.`);
  });

  it('falls back to the session directory when the shell directory was deleted', async () => {
    mkdirSync(h.ws.path('gone'));
    await h.run('bash', { command: 'cd gone' });
    rmSync(h.ws.path('gone'), { recursive: true });
    const result = await h.run('bash', { command: 'pwd' });
    expect(textOf(result)).toContain('no longer exists; the shell is back in');
    expect(textOf(result).split('\n')[0]).toBe(realpathSync(h.ws.dir));
  });

  it('kills the whole process group, grandchildren included, on timeout', async () => {
    const result = await h.run('bash', {
      command: `bash -c 'sleep 300 & echo $! > grandchild.pid; wait' & echo $! > child.pid; echo waiting; wait`,
      timeout: 1500,
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('waiting\n\nCommand timed out after 1500 ms; it and its child processes were killed.');
    const child = pidFrom('child.pid');
    const grandchild = pidFrom('grandchild.pid');
    started.push(child, grandchild);
    await until(() => !alive(child) && !alive(grandchild), 'the process group to die');
  });

  it('also kills a descendant that left the process group (setsid) on timeout', async () => {
    const result = await h.run('bash', { command: `setsid sleep 300 & echo $! > escapee.pid; echo waiting; wait`, timeout: 1500 });
    expect(result.isError).toBe(true);
    const escapee = pidFrom('escapee.pid');
    started.push(escapee);
    await until(() => !alive(escapee), 'the setsid child to die');
  });

  it('stops when aborted mid-command and kills its processes', async () => {
    const controller = new AbortController();
    const pending = h.run('bash', { command: 'sleep 300 & echo $! > sleeper.pid; echo started; wait' }, { signal: controller.signal });
    await until(() => h.events.some((e) => e.type === 'tool_output' && e.chunk.includes('started')), 'the command to start');
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe('started\n\nCommand interrupted by the user; it and its child processes were killed.');
    const sleeper = pidFrom('sleeper.pid');
    started.push(sleeper);
    await until(() => !alive(sleeper), 'the sleeper to die');
  });

  it('streams output lines as tool_output events', async () => {
    await h.run('bash', { command: 'for i in 1 2 3; do echo line $i; done' });
    const chunks = h.events.flatMap((e) => (e.type === 'tool_output' ? [e.chunk] : []));
    expect(chunks.join('')).toBe('line 1\nline 2\nline 3\n');
    expect(h.events.find((e) => e.type === 'tool_output')).toMatchObject({ id: 'call_1', stream: 'stdout' });
  });

  it('cuts long output in the middle with a clear marker', async () => {
    const small = await harness([toolBash({ outputLimit: 1000 })]);
    try {
      const result = await small.run('bash', { command: 'seq 1 2000' });
      const text = textOf(result);
      expect(text.startsWith('1\n2\n3\n')).toBe(true);
      expect(text.endsWith('1999\n2000')).toBe(true);
      expect(text).toMatch(/\[\.\.\. output cut: \d+ characters left out here;/);
      // seq 1 2000 prints 8893 bytes in 2000 lines; the marker says so, and that nothing else was saved.
      expect(text).toContain('the command printed 8893 bytes (2000 lines) in all; only the first 500 and the last 500 characters are kept, and nothing else was saved');
      expect(text).not.toContain('full output');
      expect(result.display).toMatchObject({ truncated: true });
    } finally {
      small.cleanup();
    }
  });

  it('streams a very long line without a newline in bounded pieces and caps it', async () => {
    const small = await harness([toolBash({ outputLimit: 1000 })]);
    try {
      const result = await small.run('bash', { command: "head -c 1000000 /dev/zero | tr '\\0' x" });
      const chunks = small.events.flatMap((e) => (e.type === 'tool_output' ? [e.chunk] : []));
      expect(chunks.join('')).toHaveLength(1_000_000);
      expect(chunks.length).toBeGreaterThan(1);
      expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(MAX_PENDING + 65_536);
      expect(textOf(result)).toMatch(/^x{500}\n\n\[\.\.\. output cut: 999000 characters left out here; the command printed 1000000 bytes \(0 lines\) in all;[^\n]*\n\nx{500}$/);
    } finally {
      small.cleanup();
    }
  });

  it('runs non-interactively: stdin closed, pagers off, colours stripped', async () => {
    expect(textOf(await h.run('bash', { command: 'read x; echo "got:[$x] status:$?"' }))).toBe('got:[] status:1');
    expect(textOf(await h.run('bash', { command: 'echo $GIT_PAGER $PAGER' }))).toBe('cat cat');
    expect(textOf(await h.run('bash', { command: "printf '\\033[31mred\\033[0m\\n'" }))).toBe('red');
  });

  it('does not hang on a background process that keeps the output open', async () => {
    const result = await h.run('bash', { command: 'sleep 300 & echo $! > bg.pid; echo done' });
    started.push(pidFrom('bg.pid'));
    expect(textOf(result)).toBe('done');
  });

  it('asks the sandbox service to wrap the command, and to finish it afterwards (even when it cannot start)', async () => {
    const specs: Array<{ command: string; cwd: string }> = [];
    const finished: string[] = [];
    const sandbox: Plugin = {
      name: 'fake-sandbox',
      kernel: '^1.0.0',
      apply(kernel) {
        kernel.services.provide('sandbox', {
          async wrap(spec) {
            specs.push(spec);
            if (spec.command.includes('unwrapped')) return null;
            const file = spec.command.includes('nowhere') ? '/nonexistent/bwrap' : 'bash';
            return {
              file,
              args: ['-c', `echo confined; ${spec.command}`],
              finish: async () => {
                finished.push(spec.command.split('\n').pop()!);
                return spec.command.includes('noted') ? 'The sandbox put back x.' : undefined;
              },
            };
          },
        });
      },
    };
    const boxed = await harness([sandbox, toolBash()]);
    try {
      expect(textOf(await boxed.run('bash', { command: 'echo inside' }))).toBe('confined\ninside');
      expect(textOf(await boxed.run('bash', { command: 'echo unwrapped' }))).toBe('unwrapped');
      expect(specs[0].cwd).toBe(boxed.ws.dir);
      expect(specs[0].command).toContain('echo inside');
      const noted = await boxed.run('bash', { command: 'echo noted' });
      expect(noted).toMatchObject({ isError: true });
      expect(textOf(noted)).toBe('confined\nnoted\nThe sandbox put back x.');
      await expect(boxed.run('bash', { command: 'echo nowhere' })).rejects.toThrow();
      expect(finished).toEqual(['echo inside', 'echo noted', 'echo nowhere']);
    } finally {
      boxed.cleanup();
    }
  });

  it('rejects a timeout over ten minutes', () => {
    const parsed = h.kernel.tools.get('bash')!.input.safeParse({ command: 'ls', timeout: 600_001 });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0].path).toEqual(['timeout']);
  });
});
