/**
 * Session files that were edited by hand or written by someone else, and `--resume` ids that try to leave the
 * sessions folder: the built `keel` names the fault in one line, prints nothing that drives the terminal, and
 * never loses what the file holds.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MessageParam } from '../../../kernel/index.js';
import { projectDir, sessionsRoot } from '../../../plugins/session-store/paths.js';
import { processStart } from '../../../plugins/session-store/lock.js';
import { say, type ScriptStep } from '../../helpers/anthropic-server.js';
import { cleanEnv, collect, KEEL_BIN, runKeel, spawnKeel } from '../../helpers/cli.js';
import type { Workspace } from '../../helpers/workspace.js';
import { scriptedProjects } from '../../helpers/scripted-project.js';

const fixture = scriptedProjects();
const prepare = (script: ScriptStep[]) => fixture.project(script);

const line = (record: unknown) => `${JSON.stringify(record)}\n`;
const header = (id: string, ws: Workspace) =>
  line({ type: 'header', version: 1, id, cwd: ws.dir, projectRoot: ws.dir, model: 'claude-sonnet-5-5', preset: 'default', createdAt: '2026-11-29T17:40:00.000Z' });
const userSays = (content: MessageParam['content']) => line({ type: 'message', at: 1, message: { role: 'user', content } });
const modelSays = (text: string, stats: unknown) => line({ type: 'message', at: 2, message: { role: 'assistant', content: [{ type: 'text', text }] }, stats });

/** Writes a session file by hand, as an editor (or someone else) would. */
function plant(ws: Workspace, id: string, body: string): string {
  const dir = projectDir(ws.home, ws.dir);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${id}.jsonl`);
  writeFileSync(file, header(id, ws) + body);
  return file;
}

describe('--resume ids that are paths', () => {
  it.each(['../../escape', '../outside', '/etc/passwd', 'a/../../b', '.hidden'])('"%s" stops with one line naming --resume; nothing is read, sent or written', async (id) => {
    const { server, ws, env } = await prepare([say('never')]);
    // A session-shaped canary outside the project's sessions folder, where the path would lead.
    const outside = mkdtempSync(path.join(os.tmpdir(), 'keel-outside-'));
    fixture.defer(() => rmSync(outside, { recursive: true, force: true }));
    const canary = path.join(outside, 'escape.jsonl');
    const planted = header('escape', ws) + userSays('CANARY-OUTSIDE-SESSION-71c3') + modelSays('ok', { turns: 1, costUsd: 0 });
    writeFileSync(canary, planted);

    const run = await runKeel(['-p', 'go on', '--resume', id], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`keel: --resume: "${id}" is not a session id (letters, digits, "-" and "_" only)\n`);
    expect(server.messageRequests()).toHaveLength(0);
    expect(readFileSync(canary, 'utf8')).toBe(planted);
    expect(existsSync(`${canary.slice(0, -'.jsonl'.length)}.lock`)).toBe(false);
    expect(existsSync(projectDir(ws.home, ws.dir))).toBe(false);
  });
});

describe('a session file edited by hand or written by someone else', () => {
  it('keel sessions shows escape sequences of a first prompt as text, never sends them to the terminal', async () => {
    const { ws, env } = await prepare([]);
    const id = randomUUID();
    plant(ws, id, userSays('fix \u001b]0;X\u0007 \u001b]52;c;eA==\u0007\u001b[2J\u009b31m done') + modelSays('ok', { turns: 1, costUsd: 0.01 }));
    const list = await runKeel(['sessions'], { cwd: ws.dir, env });
    expect(list.code).toBe(0);
    expect(list.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(list.stdout).toMatch(/  fix \^\[\]0;X\^G \^\[\]52;c;eA==\^G\^\[\[2J<U\+009B>31m done$/m);
  });

  it('running totals that are not numbers are left out: listing, /cost and resume work, and the file keeps every line', async () => {
    const { server, ws, env } = await prepare([say('third answer')]);
    const id = randomUUID();
    const file = plant(
      ws,
      id,
      userSays('first question') +
        modelSays('first answer', { turns: 1, costUsd: 0.02, calls: 1, usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }) +
        userSays('second question') +
        // Hand-edited: a cost that is a string, a turn count that is missing, token counts that are not numbers.
        modelSays('second answer', { costUsd: '0.5', usage: { input_tokens: 'many' } }),
    );
    const before = readFileSync(file, 'utf8');

    const list = await runKeel(['sessions'], { cwd: ws.dir, env });
    expect(list.stderr).toBe('');
    expect(list.stdout).toMatch(new RegExp(`^${id}\\s+\\S+ \\S+\\s+1\\s+\\$0\\.0200\\s+first question$`, 'm'));
    const json = await runKeel(['sessions', '--json'], { cwd: ws.dir, env });
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ id, turns: 1, cost_usd: 0.02 })]);

    const cost = await runKeel(['-p', '/cost', '--resume', id], { cwd: ws.dir, env });
    expect(cost.stderr).toBe('');
    expect(cost.code).toBe(0);
    expect(cost.stdout).toContain('Earlier runs:  $0.0200 over 1 call');

    const resumed = await runKeel(['-p', 'third question', '--resume', id, '--output-format', 'json'], { cwd: ws.dir, env });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ session_id: id, result: 'third answer' });
    const sent = server.messageRequests()[0].body.messages as MessageParam[];
    expect(JSON.stringify(sent)).toContain('second answer');
    // Nothing of the file is lost or rewritten: the resumed run only appends.
    expect(readFileSync(file, 'utf8').startsWith(before)).toBe(true);
  });

  it('a first line that is not a header and lines that are not records: warned about by file and line, the rest resumes', async () => {
    const { server, ws, env } = await prepare([say('go on answer')]);
    const id = randomUUID();
    const dir = projectDir(ws.home, ws.dir);
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${id}.jsonl`);
    const body = ['not json at all', userSays('kept question').trimEnd(), '{"no":"type"}', '[1,2,3]', modelSays('kept answer', { turns: 1, costUsd: 0 }).trimEnd(), ''].join('\n');
    writeFileSync(file, body);
    const run = await runKeel(['-p', 'next', '--resume', id], { cwd: ws.dir, env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr.trim().split('\n')).toEqual([
      `keel: warn: ${file}: line 1 is not a valid session header; skipped`,
      `keel: warn: ${file}: line 3 is corrupt (not a record (no "type")); skipped`,
      `keel: warn: ${file}: line 4 is corrupt (not a record (no "type")); skipped`,
    ]);
    const sent = server.messageRequests()[0].body.messages as MessageParam[];
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(readFileSync(file, 'utf8').startsWith(body)).toBe(true);
  });
});

describe("a project's sessions folder that is a file", () => {
  it('keel sessions and --continue stop with one line naming it; the file is untouched and nothing is sent', async () => {
    const { server, ws, env } = await prepare([say('never')]);
    const dir = projectDir(ws.home, ws.dir);
    mkdirSync(path.dirname(dir), { recursive: true });
    writeFileSync(dir, 'not a folder\n');
    const line = `keel: cannot read this project's sessions in ${dir}: it is not a folder (ENOTDIR)\n`;
    const list = await runKeel(['sessions'], { cwd: ws.dir, env });
    expect(list).toMatchObject({ code: 1, stdout: '', stderr: line });
    const cont = await runKeel(['-p', 'go on', '--continue'], { cwd: ws.dir, env });
    expect(cont).toMatchObject({ code: 1, stderr: line });
    expect(server.messageRequests()).toHaveLength(0);
    expect(readFileSync(dir, 'utf8')).toBe('not a folder\n');
  });
});

describe('a session file whose messages are not what the API takes', () => {
  it('a line with a block missing its fields is skipped with a warning naming file, line and block; the rest resumes', async () => {
    const { server, ws, env } = await prepare([say('resumed answer')]);
    const id = randomUUID();
    const broken = line({ type: 'message', at: 2, message: { role: 'assistant', content: [{ type: 'text' }, { type: 'tool_use', name: 'bash' }] }, stats: { turns: 1, costUsd: 0 } });
    const file = plant(ws, id, userSays('kept question') + broken + modelSays('kept answer', { turns: 1, costUsd: 0 }));
    const before = readFileSync(file, 'utf8');
    const run = await runKeel(['-p', 'next', '--resume', id], { cwd: ws.dir, env });
    expect(run.stderr).toBe(`keel: warn: ${file}: line 3 is corrupt (message record with a text block without its text (block 1)); skipped\n`);
    expect(run).toMatchObject({ code: 0, stdout: 'resumed answer\n' });
    const sent = server.messageRequests()[0].body.messages as MessageParam[];
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(readFileSync(file, 'utf8').startsWith(before)).toBe(true);
  });
});

describe('two keel processes on one session', () => {
  it('the second is refused in one line while the first runs; SIGTERM frees the lock; the file keeps every record of both runs', async () => {
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const { server, ws, env } = await prepare([
      say('first answer'),
      // The first resumed run's request is held open until the test lets it go (it never does: SIGTERM ends it).
      { content: [{ type: 'text', text: 'never finished' }], beforeEvent: async ({ index, closed }) => { if (index === 0) { held(); await Promise.race([released, closed]); } } },
      say('fork answer'),
      say('last answer'),
    ]);
    fixture.defer(() => release());
    const id = JSON.parse((await runKeel(['-p', 'first question', '--output-format', 'json'], { cwd: ws.dir, env })).stdout).session_id as string;
    const file = path.join(projectDir(ws.home, ws.dir), `${id}.jsonl`);
    const lock = path.join(projectDir(ws.home, ws.dir), `${id}.lock`);

    const first = spawnKeel(['-p', 'second question', '--resume', id], { cwd: ws.dir, env });
    const firstDone = collect(first);
    fixture.defer(() => void first.kill('SIGKILL'));
    await holding;
    expect(readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${first.pid} `));
    // The lock names this very process: its pid and its own start time (not the build's, whose snapshot it runs from).
    expect(readFileSync(lock, 'utf8').trim().split(' ')[2]).toBe(processStart(first.pid!));

    const second = await runKeel(['-p', 'third question', '--resume', id], { cwd: ws.dir, env });
    expect(second.code, JSON.stringify(second)).toBe(1);
    expect(second.stderr).toBe(
      `keel: session ${id} is in use by another keel process (pid ${first.pid}); wait for it to end, add --fork-session to continue in a copy, or delete ${lock} if no keel runs it\n`,
    );
    const fork = await runKeel(['-p', 'fork question', '--resume', id, '--fork-session', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(fork.code, fork.stderr).toBe(0);
    expect(JSON.parse(fork.stdout).session_id).not.toBe(id);

    first.kill('SIGTERM');
    const ended = await firstDone;
    expect(ended.code === null ? ended.signal : ended.code).not.toBe(0);
    expect(existsSync(lock)).toBe(false);

    const last = await runKeel(['-p', 'last question', '--resume', id], { cwd: ws.dir, env });
    expect(last.stderr).toBe('');
    expect(last).toMatchObject({ code: 0, stdout: 'last answer\n' });
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    const records = lines.map((text) => JSON.parse(text) as { type: string; message?: MessageParam });
    const said = records.filter((r) => r.type === 'message').map((r) => JSON.stringify(r.message!.content));
    for (const words of ['first question', 'first answer', 'second question', 'last question', 'last answer']) expect(said.some((t) => t.includes(words))).toBe(true);
    expect(said.some((t) => t.includes('third question') || t.includes('fork question'))).toBe(false);
    expect(server.remaining()).toBe(0);
  });
});

/** bubblewrap can put a small tmpfs over one folder for one process: a disk that fills up, for real. */
const canBwrap = spawnSync('bwrap', ['--bind', '/', '/', '--dev', '/dev', '--size', '65536', '--tmpfs', '/mnt', 'true']).status === 0;

describe('a full disk', () => {
  it.skipIf(!canBwrap)('resuming on a full disk: one error line naming the file, the run goes on unsaved, the file and the folder stay as they were', async () => {
    const { server, ws, env } = await prepare([say('first answer'), say('second answer')]);
    const id = JSON.parse((await runKeel(['-p', 'first question', '--output-format', 'json'], { cwd: ws.dir, env })).stdout).session_id as string;
    const dir = projectDir(ws.home, ws.dir);
    const file = path.join(dir, `${id}.jsonl`);
    const saved = mkdtempSync(path.join(os.tmpdir(), 'keel-full-disk-'));
    fixture.defer(() => rmSync(saved, { recursive: true, force: true }));
    writeFileSync(path.join(saved, 'before.jsonl'), readFileSync(file));
    // Inside: the project's sessions folder is a 64 KiB tmpfs holding the session, filled to the last byte.
    const script = [
      'cp "$SAVED/before.jsonl" "$FILE"',
      'dd if=/dev/zero of="$DIR/filler" bs=4096 2>/dev/null',
      '"$NODE" "$KEEL" -p "second question" --resume "$ID"',
      'rc=$?',
      'cp "$FILE" "$SAVED/after.jsonl"',
      'ls -a "$DIR" > "$SAVED/listing"',
      'exit $rc',
    ].join('\n');
    const child = spawn('bwrap', ['--bind', '/', '/', '--dev', '/dev', '--size', '65536', '--tmpfs', dir, '--chdir', ws.dir, 'sh', '-c', script], {
      env: cleanEnv({ ...env, SAVED: saved, FILE: file, DIR: dir, ID: id, NODE: process.execPath, KEEL: KEEL_BIN }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = await collect(child);
    expect(run.stderr).toBe(`keel: error: cannot write session file ${file}: ENOSPC: no space left on device, write; this session is no longer saved\n`);
    expect(run).toMatchObject({ code: 0, stdout: 'second answer\n' });
    expect(JSON.stringify(server.messageRequests()[1].body.messages)).toContain('first answer');
    expect(readFileSync(path.join(saved, 'after.jsonl'), 'utf8')).toBe(readFileSync(path.join(saved, 'before.jsonl'), 'utf8'));
    expect(readFileSync(path.join(saved, 'listing'), 'utf8').split('\n').filter(Boolean).sort()).toEqual(['.', '..', `${id}.jsonl`, 'filler']);
  });

  it.skipIf(!canBwrap)('the disk fills up in the middle of a record: the run finishes, the torn record is cut on the next resume, every line is whole', async () => {
    const long = 'all work and no play '.repeat(1500);
    const { server, ws, env } = await prepare([say(long), say('second answer')]);
    const root = sessionsRoot(ws.home);
    mkdirSync(root, { recursive: true });
    const saved = mkdtempSync(path.join(os.tmpdir(), 'keel-full-disk-'));
    fixture.defer(() => rmSync(saved, { recursive: true, force: true }));
    // 64 KiB, 52 KiB of it taken: the header and the question fit, the 30 KB answer does not.
    const script = [
      'dd if=/dev/zero of="$ROOT/filler" bs=4096 count=13 2>/dev/null',
      '"$NODE" "$KEEL" -p "first question" --output-format json > "$SAVED/first.out" 2> "$SAVED/first.err"; echo $? > "$SAVED/first.rc"',
      'rm "$ROOT/filler"',
      'ID=$("$NODE" -e "process.stdout.write(JSON.parse(require(\'fs\').readFileSync(process.argv[1], \'utf8\')).session_id)" "$SAVED/first.out")',
      'cp "$ROOT"/*/"$ID.jsonl" "$SAVED/torn.jsonl"',
      '"$NODE" "$KEEL" -p "second question" --resume "$ID" > "$SAVED/second.out" 2> "$SAVED/second.err"; echo $? > "$SAVED/second.rc"',
      'cp "$ROOT"/*/"$ID.jsonl" "$SAVED/after.jsonl"',
    ].join('\n');
    const child = spawn('bwrap', ['--bind', '/', '/', '--dev', '/dev', '--size', '65536', '--tmpfs', root, '--chdir', ws.dir, 'sh', '-c', script], {
      env: cleanEnv({ ...env, SAVED: saved, ROOT: root, NODE: process.execPath, KEEL: KEEL_BIN }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await collect(child);
    const read = (name: string) => readFileSync(path.join(saved, name), 'utf8');
    expect(read('first.rc').trim()).toBe('0');
    expect(JSON.parse(read('first.out')).result).toBe(long);
    const id = JSON.parse(read('first.out')).session_id as string;
    const file = path.join(projectDir(ws.home, ws.dir), `${id}.jsonl`);
    expect(read('first.err')).toBe(`keel: error: cannot write session file ${file}: ENOSPC: no space left on device, write; this session is no longer saved\n`);
    expect(read('torn.jsonl').endsWith('\n')).toBe(false);

    expect(read('second.err')).toBe('');
    expect(read('second.rc').trim()).toBe('0');
    expect(read('second.out')).toBe('second answer\n');
    const sent = JSON.stringify(server.messageRequests()[1].body.messages);
    expect(sent).toContain('first question');
    expect(sent).toContain('second question');
    const after = read('after.jsonl');
    expect(after.endsWith('\n')).toBe(true);
    for (const text of after.split('\n').filter(Boolean)) expect(() => JSON.parse(text)).not.toThrow();
    expect(after).toContain('second answer');
  });
});

describe("a repository's oversized instruction file", () => {
  const big = `CANARY-HUGE-INSTRUCTIONS-5e1a\n${'x'.repeat(2 * 1024 * 1024)}\n`;
  const size = Buffer.byteLength(big);

  it('trusted: Keel does not start without it (its front matter may hold rules): one line naming it and its size, exit 2', async () => {
    const { server, ws, env } = await prepare([say('never')]);
    const file = path.join(ws.dir, 'CLAUDE.md');
    writeFileSync(file, big);
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toBe(`keel: ${file}: not read: ${file} is larger than 1048576 bytes (${size})\n`);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('untrusted: skipped with a warning naming it and its size; the run goes on without it', async () => {
    const { server, ws, env } = await prepare([say('answered')]);
    const file = path.join(ws.dir, 'CLAUDE.md');
    writeFileSync(file, big);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: 'answered\n' });
    expect(run.stderr).toContain(`${file} is larger than 1048576 bytes (${size})`);
    expect(JSON.stringify(server.messageRequests()[0].body)).not.toContain('CANARY-HUGE-INSTRUCTIONS-5e1a');
  });
});
