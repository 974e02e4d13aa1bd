/**
 * Issue 24 class 3 and issue 25's /rewind: a rewind writes and deletes only where Keel's own writes went. A link
 * made after the checkpoint (at the file, or at a folder above it), a hard link, a protected path or a deny rule
 * stops it before anything is touched; files changed outside Keel since its last write are listed and left alone
 * unless --force; a fault half-way says what was and was not put back; restores are atomic and keep the mode.
 */
import { spawn, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { callTool, callTools, say, SECRETS, useHostile, type Hostile } from '../../helpers/adversary.js';
import { cleanEnv, collect, KEEL_BIN, runKeel } from '../../helpers/cli.js';

const hostile = useHostile();

type Call = { name: string; input: Record<string, unknown>; id?: string };

/** Turn 1 of a session: the model makes `calls` (auto mode), and the test checks they all ran. */
async function firstTurn(h: Hostile, ...calls: Call[]): Promise<void> {
  h.server.push(callTools(...calls), say('turn 1 done'));
  const run = await h.run(['-p', 'turn one', '--permission-mode', 'auto']);
  expect(run.code, run.stderr).toBe(0);
  const v = h.verdict();
  for (const [id, result] of Object.entries(v.results)) expect(result.is_error, `${id}: ${JSON.stringify(result.content)}`).toBeFalsy();
}

const rewind = (h: Hostile, args: string, extra: string[] = []) => h.run(['-p', `/rewind ${args}`, '--continue', ...extra]);
const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : null);
const canary = (h: Hostile) => path.join(h.outside, 'secret.txt');

describe('class 3: /rewind writes only where Keel wrote', () => {
  const targets = {
    'a canary outside the project': (h: Hostile) => canary(h),
    '.git/config': (h: Hostile) => h.path('.git/config'),
    '~/.bashrc': (h: Hostile) => path.join(h.home, '.bashrc'),
  };

  it.each(Object.keys(targets))('a symbolic link to %s planted at a restored file after the checkpoint: refused, even with --force', async (name) => {
    const h = await hostile();
    h.write('notes.txt', 'original\n');
    await firstTurn(h, { name: 'edit_file', input: { path: 'notes.txt', old_string: 'original', new_string: 'changed' } });
    const target = targets[name as keyof typeof targets](h);
    const before = readFileSync(target, 'utf8');
    unlinkSync(h.path('notes.txt'));
    symlinkSync(target, h.path('notes.txt'));
    h.settle();
    for (const args of ['1', '1 files --force']) {
      const run = await rewind(h, args);
      expect(run.code, args).toBe(1);
      expect(run.stderr).toContain(`cannot rewind the files to before turn 1:\n  notes.txt: its path now leads to ${target} (a symbolic link was made in its path since the checkpoint)\nNothing was changed.`);
    }
    expect(readFileSync(target, 'utf8')).toBe(before);
    expect(lstatSync(h.path('notes.txt')).isSymbolicLink()).toBe(true);
    expect(h.verdict().changed).toEqual([]);
  });

  it('a folder above a restored file swapped for a link to a folder outside: refused, the file outside unchanged', async () => {
    const h = await hostile();
    h.write('docs/guide.md', 'guide v1\n');
    await firstTurn(h, { name: 'edit_file', input: { path: 'docs/guide.md', old_string: 'v1', new_string: 'v2' } });
    writeFileSync(path.join(h.outside, 'guide.md'), 'outside guide\n');
    renameSync(h.path('docs'), h.path('docs.old'));
    symlinkSync(h.outside, h.path('docs'));
    h.settle();
    const run = await rewind(h, '1 --force');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`docs/guide.md: its path now leads to ${path.join(h.outside, 'guide.md')}`);
    expect(read(path.join(h.outside, 'guide.md'))).toBe('outside guide\n');
    expect(h.verdict().changed).toEqual([]);
  });

  it('a file Keel created, replaced by a link to ~/.bashrc: the rewind does not delete through it', async () => {
    const h = await hostile();
    await firstTurn(h, { name: 'write_file', input: { path: 'made.txt', content: 'made by keel\n' } });
    unlinkSync(h.path('made.txt'));
    symlinkSync(path.join(h.home, '.bashrc'), h.path('made.txt'));
    h.settle();
    const run = await rewind(h, '1 --force');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`made.txt: its path now leads to ${path.join(h.home, '.bashrc')}`);
    expect(read(path.join(h.home, '.bashrc'))).toBe('# bashrc\n');
    expect(lstatSync(h.path('made.txt')).isSymbolicLink()).toBe(true);
    // The conversation was not rewound either: turn 1 is still listed.
    expect((await rewind(h, '')).stdout).toMatch(/ 1 {2}.*turn one/);
  });

  it('a hard link to the canary outside planted at a restored file: refused, even with --force', async () => {
    const h = await hostile();
    h.write('notes.txt', 'original\n');
    await firstTurn(h, { name: 'edit_file', input: { path: 'notes.txt', old_string: 'original', new_string: 'changed' } });
    unlinkSync(h.path('notes.txt'));
    linkSync(canary(h), h.path('notes.txt'));
    h.settle();
    const run = await rewind(h, '1 --force');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('notes.txt: it has 2 hard links, so it is also a file elsewhere');
    expect(readFileSync(canary(h), 'utf8')).toBe(`${SECRETS.outside}\n`);
    expect(h.verdict().changed).toEqual([]);
  });

  it('a FIFO put where a restored file was: refused at once, nothing blocks', async () => {
    const h = await hostile();
    h.write('notes.txt', 'original\n');
    await firstTurn(h, { name: 'edit_file', input: { path: 'notes.txt', old_string: 'original', new_string: 'changed' } });
    unlinkSync(h.path('notes.txt'));
    execFileSync('mkfifo', [h.path('notes.txt')]);
    const run = await rewind(h, '1 --force');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('notes.txt: it is now a device, FIFO or socket, not a regular file');
    expect(lstatSync(h.path('notes.txt')).isFIFO()).toBe(true);
  });

  it('a deny rule for edit_file or write_file refuses the restore; without it the rewind goes', async () => {
    const h = await hostile();
    h.write('notes.txt', 'original\n');
    await firstTurn(h, { name: 'edit_file', input: { path: 'notes.txt', old_string: 'original', new_string: 'changed' } });
    // The restore is judged as an edit_file of the file; a path deny rule covers every write tool, whichever it names.
    for (const rule of ['Edit(notes.txt)', 'Write(notes.txt)']) {
      const run = await rewind(h, '1 files', ['--disallowedTools', rule]);
      expect(run.code, rule).toBe(1);
      expect(run.stderr).toContain(`the permission policy refused part of /rewind 1:\n  notes.txt: edit_file is denied by the rule "${rule}"`);
      expect(read(h.path('notes.txt'))).toBe('changed\n');
    }
    const run = await rewind(h, '1 files');
    expect(run.code, run.stderr).toBe(0);
    expect(read(h.path('notes.txt'))).toBe('original\n');
  });

  it('a protected path (.claude/settings.json) is asked about: refused headless, refused and then allowed by an SDK host', async () => {
    const h = await hostile([callTool('write_file', { path: '.claude/settings.json', content: '{"permissions":{}}\n' }, 'w'), say('wrote it')]);
    const host = sdkHost(h);
    host.send(user('write the settings'));
    const ask = await host.next((m) => m.type === 'control_request');
    expect(ask.request).toMatchObject({ subtype: 'can_use_tool', tool_name: 'write_file', input: { path: '.claude/settings.json' } });
    host.answer(ask, 'allow');
    await host.next((m) => m.type === 'result');
    const settings = h.path('.claude/settings.json');
    expect(read(settings)).toBe('{"permissions":{}}\n');
    await host.close();

    // Headless: nobody can be asked, so the removal is refused and the file stays.
    const headless = await rewind(h, '1 files');
    expect(headless.code).toBe(1);
    expect(headless.stderr).toMatch(/the permission policy refused part of \/rewind 1:\n {2}\.claude\/settings\.json: write_file needs approval: .*and nobody could be asked to approve it/);
    expect(read(settings)).toBe('{"permissions":{}}\n');

    // An SDK host is asked: its denial stops the rewind, its approval lets it run.
    const again = sdkHost(h, ['--continue']);
    again.send(user('/rewind 1 files'));
    const question = await again.next((m) => m.type === 'control_request');
    expect(question.request).toMatchObject({ subtype: 'can_use_tool', tool_name: 'write_file', input: { path: settings } });
    again.answer(question, 'deny');
    expect(await again.next((m) => m.type === 'result')).toMatchObject({ is_error: true });
    expect(read(settings)).toBe('{"permissions":{}}\n');
    again.send(user('/rewind 1 files'));
    again.answer(await again.next((m) => m.type === 'control_request'), 'allow');
    expect(await again.next((m) => m.type === 'result')).toMatchObject({ is_error: false, result: expect.stringContaining('removed .claude/settings.json') });
    expect(existsSync(settings)).toBe(false);
    await again.close();
  });
});

describe('issue 25: /rewind loses nothing', () => {
  it('lists files changed outside Keel since its last write and changes nothing without --force; --force puts them back', async () => {
    const h = await hostile();
    h.write('notes.txt', 'original\n');
    h.write('kept.txt', 'kept v1\n');
    await firstTurn(
      h,
      { name: 'edit_file', input: { path: 'notes.txt', old_string: 'original', new_string: 'changed' } },
      { name: 'write_file', input: { path: 'made.txt', content: 'made\n' } },
      { name: 'edit_file', input: { path: 'kept.txt', old_string: 'v1', new_string: 'v2' } },
    );
    writeFileSync(h.path('notes.txt'), 'the user edited this by hand\n');
    writeFileSync(h.path('made.txt'), 'the user kept working here\n');
    const run = await rewind(h, '1');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'these files changed outside Keel since it last wrote them, and /rewind 1 would overwrite or delete those changes:\n  notes.txt (changed outside Keel since Keel last wrote it)\n  made.txt (changed outside Keel since Keel last wrote it)\nNothing was changed. Run /rewind 1 --force',
    );
    expect(run.stderr).not.toContain('kept.txt');
    expect([read(h.path('notes.txt')), read(h.path('made.txt')), read(h.path('kept.txt'))]).toEqual(['the user edited this by hand\n', 'the user kept working here\n', 'kept v2\n']);
    expect((await rewind(h, '')).stdout).toMatch(/ 1 {2}.*turn one/);

    const forced = await rewind(h, '1 --force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('Files put back as they were before turn 1:\n  restored notes.txt\n  restored kept.txt\n  removed made.txt (created in or after turn 1)\n');
    expect([read(h.path('notes.txt')), read(h.path('made.txt')), read(h.path('kept.txt'))]).toEqual(['original\n', null, 'kept v1\n']);
  });

  it('a file deleted outside Keel is named too, and --force brings it back with the mode it had', async () => {
    const h = await hostile();
    h.write('tool.sh', '#!/bin/sh\necho v1\n');
    chmodSync(h.path('tool.sh'), 0o750);
    await firstTurn(h, { name: 'edit_file', input: { path: 'tool.sh', old_string: 'v1', new_string: 'v2' } });
    rmSync(h.path('tool.sh'));
    const run = await rewind(h, '1 files');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('tool.sh (deleted outside Keel since Keel last wrote it)');
    expect(existsSync(h.path('tool.sh'))).toBe(false);
    expect((await rewind(h, '1 files --force')).code).toBe(0);
    expect(read(h.path('tool.sh'))).toBe('#!/bin/sh\necho v1\n');
    expect(statSync(h.path('tool.sh')).mode & 0o777).toBe(0o750);
  });

  it('restores atomically: a new file renamed into place, mode kept, no temporary file left', async () => {
    const h = await hostile();
    h.write('bin/run.sh', '#!/bin/sh\necho one\n');
    chmodSync(h.path('bin/run.sh'), 0o755);
    await firstTurn(h, { name: 'edit_file', input: { path: 'bin/run.sh', old_string: 'one', new_string: 'two' } });
    chmodSync(h.path('bin/run.sh'), 0o700);
    const inode = statSync(h.path('bin/run.sh')).ino;
    const run = await rewind(h, '1 files');
    expect(run.code, run.stderr).toBe(0);
    const after = statSync(h.path('bin/run.sh'));
    expect(read(h.path('bin/run.sh'))).toBe('#!/bin/sh\necho one\n');
    expect(after.mode & 0o777).toBe(0o700);
    expect(after.ino).not.toBe(inode);
    expect(readdirSync(h.path('bin'))).toEqual(['run.sh']);
  });

  it('a full disk: the file keeps its whole current content, no half-written or temporary file is left, and the report says so', async () => {
    const h = await hostile([callTool('read_file', { path: 'data.txt' }), callTool('write_file', { path: 'data.txt', content: 'small\n' }), say('turn 1 done')]);
    const out = path.join(path.dirname(h.dir), 'out');
    mkdirSync(out);
    // The project is a 256 KB file system of its own (bubblewrap's tmpfs): both runs happen inside it.
    const script = [
      'set -e',
      'cd "$WS"',
      "head -c 100000 /dev/zero | tr '\\0' x > data.txt",
      `${KEEL_BIN} -p 'turn one' --permission-mode auto > "$OUT/turn1" 2>&1`,
      'dd if=/dev/zero of=filler bs=4k 2>/dev/null || true',
      `${KEEL_BIN} -p '/rewind 1 files' --continue > "$OUT/stdout" 2> "$OUT/stderr" || echo $? > "$OUT/code"`,
      'cp data.txt "$OUT/data"',
      'ls -A > "$OUT/ls"',
    ].join('\n');
    const child = spawn('bwrap', ['--dev-bind', '/', '/', '--size', String(256 * 1024), '--tmpfs', h.dir, '--', 'sh', '-c', script], {
      env: cleanEnv({ ...h.env, WS: h.dir, OUT: out }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = await collect(child, 60_000);
    expect(run.code, `${run.stderr}${read(path.join(out, 'turn1'))}`).toBe(0);
    expect(read(path.join(out, 'code'))).toBe('1\n');
    expect(read(path.join(out, 'stderr'))).toContain(
      '/rewind 1 stopped short: 1 of 1 file could not be put back.\nNo file was put back.\nNot put back (each is as it was before this /rewind):\n  data.txt: the disk is full (ENOSPC)',
    );
    expect(read(path.join(out, 'data'))).toBe('small\n');
    expect(read(path.join(out, 'ls'))!.split('\n').filter(Boolean).sort()).toEqual(['data.txt', 'filler']);
  }, 90_000);

  it('a permission fault half-way: the other files are put back, and the report says exactly which were not', async () => {
    const h = await hostile();
    h.write('a.txt', 'a1\n');
    h.write('locked/b.txt', 'b1\n');
    h.write('z.txt', 'z1\n');
    await firstTurn(
      h,
      { name: 'edit_file', input: { path: 'a.txt', old_string: 'a1', new_string: 'a2' } },
      { name: 'edit_file', input: { path: 'locked/b.txt', old_string: 'b1', new_string: 'b2' } },
      { name: 'edit_file', input: { path: 'z.txt', old_string: 'z1', new_string: 'z2' } },
    );
    const bin = unprivileged(h);
    chmodSync(h.path('locked'), 0o555);
    const run = await runKeel(['-p', '/rewind 1', '--continue'], { cwd: h.dir, env: h.env, bin });
    chmodSync(h.path('locked'), 0o755);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      '/rewind 1 stopped short: 1 of 3 files could not be put back, so the conversation was kept.\nPut back:\n  restored a.txt\n  restored z.txt\nNot put back (each is as it was before this /rewind):\n  locked/b.txt: permission denied (EACCES)',
    );
    expect([read(h.path('a.txt')), read(h.path('locked/b.txt')), read(h.path('z.txt'))]).toEqual(['a1\n', 'b2\n', 'z1\n']);
    expect(readdirSync(h.path('locked'))).toEqual(['b.txt']);
    // What was put back is known as Keel's own write: rewinding again needs no --force and finishes the job.
    const again = await runKeel(['-p', '/rewind 1', '--continue'], { cwd: h.dir, env: h.env, bin });
    expect(again.code, again.stderr).toBe(0);
    expect(read(h.path('locked/b.txt'))).toBe('b1\n');
  });
});

/**
 * Runs keel as an unprivileged user when the tests run as root (root ignores file modes): the world is handed to
 * `nobody`, and keel starts through setpriv. Otherwise keel runs as it is.
 */
function unprivileged(h: Hostile): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const base = path.dirname(h.dir);
  execFileSync('chown', ['-R', '65534:65534', base]);
  const wrapper = path.join(base, 'keel-as-nobody.sh');
  writeFileSync(wrapper, `#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups ${KEEL_BIN} "$@"\n`, { mode: 0o755 });
  return wrapper;
}

const user = (content: string) => ({ type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, session_id: '' });

/** keel in SDK mode (stream-json both ways) in the hostile project, with a host that answers can_use_tool. */
function sdkHost(h: Hostile, extra: string[] = []) {
  const child = spawn(KEEL_BIN, ['--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--permission-prompt-tool', 'stdio', ...extra], { cwd: h.dir, env: cleanEnv(h.env), stdio: ['pipe', 'pipe', 'pipe'] });
  const exit = collect(child, 60_000);
  const seen: any[] = [];
  const waiters: Array<{ match: (m: any) => boolean; resolve: (m: any) => void }> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const message = JSON.parse(line);
    const waiter = waiters.find((w) => w.match(message));
    if (waiter) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(message);
    } else seen.push(message);
  });
  return {
    send: (value: unknown) => child.stdin!.write(`${JSON.stringify(value)}\n`),
    next(match: (m: any) => boolean): Promise<any> {
      const found = seen.find(match);
      if (found) {
        seen.splice(seen.indexOf(found), 1);
        return Promise.resolve(found);
      }
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    answer(ask: any, behavior: 'allow' | 'deny') {
      const response = behavior === 'allow' ? { behavior, updatedInput: ask.request.input } : { behavior, message: 'not now' };
      child.stdin!.write(`${JSON.stringify({ type: 'control_response', response: { subtype: 'success', request_id: ask.request_id, response } })}\n`);
    },
    async close() {
      child.stdin!.end();
      const run = await exit;
      expect(run.code, run.stderr).toBe(0);
    },
  };
}
