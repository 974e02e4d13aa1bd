import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, callTools, plainMessages, say } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { ndjson, runKeel } from '../helpers/cli.js';

const prepare = useScriptedProjects();

/** Three user turns, each a headless run continuing the session: create, edit and add, edit and delete by tool. */
function threeTurns() {
  return [
    // turn 1: create a.txt and b.txt
    callTools({ name: 'write_file', input: { path: 'a.txt', content: 'one\n' } }, { name: 'write_file', input: { path: 'b.txt', content: 'bee\n' } }),
    say('turn 1 done'),
    // turn 2: edit a.txt, create c.txt
    callTool('read_file', { path: 'a.txt' }),
    callTools({ name: 'edit_file', input: { path: 'a.txt', old_string: 'one', new_string: 'two' } }, { name: 'write_file', input: { path: 'c.txt', content: 'sea\n' } }),
    say('turn 2 done'),
    // turn 3: edit a.txt again (twice: only the first change is kept) and b.txt
    callTool('read_file', { path: 'a.txt' }),
    callTool('edit_file', { path: 'a.txt', old_string: 'two', new_string: 'three' }),
    callTool('edit_file', { path: 'a.txt', old_string: 'three', new_string: 'four' }),
    callTool('read_file', { path: 'b.txt' }),
    callTool('edit_file', { path: 'b.txt', old_string: 'bee', new_string: 'BEE' }),
    say('turn 3 done'),
  ];
}

async function runTurns(env: Record<string, string>, cwd: string): Promise<void> {
  for (const [i, prompt] of ['first: create a and b', 'second: edit a, add c', 'third: edit a and b'].entries()) {
    const run = await runKeel(['-p', prompt, '--permission-mode', 'auto', ...(i > 0 ? ['--continue'] : [])], { cwd, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  }
}

const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : null);

describe('checkpoints and /rewind through the CLI', () => {
  it('lists the turns, then rewinds files and conversation to before turn 2 and later to before turn 1', async () => {
    const { env, ws, server } = await prepare(threeTurns());
    await runTurns(env, ws.dir);
    expect([read(ws.path('a.txt')), read(ws.path('b.txt')), read(ws.path('c.txt'))]).toEqual(['four\n', 'BEE\n', 'sea\n']);

    const list = await runKeel(['-p', '/rewind', '--continue'], { cwd: ws.dir, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/ 1 {2}\S+ \S+ {2}first: create a and b {2}\(2 files changed\)/);
    expect(list.stdout).toMatch(/ 2 {2}.*second: edit a, add c {2}\(2 files changed\)/);
    expect(list.stdout).toMatch(/ 3 {2}.*third: edit a and b {2}\(2 files changed\)/);
    expect(list.stdout).toContain('what bash commands changed is not undone');

    const rewound = await runKeel(['-p', '/rewind 2', '--continue'], { cwd: ws.dir, env });
    expect(rewound.stderr).toBe('');
    expect(rewound.code).toBe(0);
    expect(rewound.stdout).toContain('Files put back as they were before turn 2:\n  restored a.txt\n  restored b.txt\n  removed c.txt (created in or after turn 2)\n');
    expect(rewound.stdout).toContain('Changes made through bash are not tracked');
    expect(rewound.stdout).toContain('Conversation rewound to before turn 2: "second: edit a, add c"');
    expect([read(ws.path('a.txt')), read(ws.path('b.txt')), read(ws.path('c.txt'))]).toEqual(['one\n', 'bee\n', null]);

    // The next run (a resume) continues from turn 1's conversation, and becomes turn 2.
    server.push(say('back at turn 2'));
    const next = await runKeel(['-p', 'after the rewind', '--continue'], { cwd: ws.dir, env });
    expect(next.code).toBe(0);
    const sent = plainMessages(server.messageRequests().at(-1)!.body.messages);
    expect(sent.filter((m) => m.role === 'user' && typeof m.content === 'string').map((m) => m.content)).toEqual(['first: create a and b', 'after the rewind']);
    const relist = await runKeel(['-p', '/rewind', '--continue'], { cwd: ws.dir, env });
    expect(relist.stdout).toMatch(/ 2 {2}.*after the rewind\n/);
    expect(relist.stdout).not.toContain('third');

    const toStart = await runKeel(['-p', '/rewind 1', '--output-format', 'json', '--continue'], { cwd: ws.dir, env });
    expect(toStart.code).toBe(0);
    const result = ndjson(toStart.stdout)[0];
    expect(result).toMatchObject({ type: 'result', subtype: 'success' });
    expect(result.result).toContain('removed a.txt');
    expect(result.result).toContain('removed b.txt');
    expect([read(ws.path('a.txt')), read(ws.path('b.txt'))]).toEqual([null, null]);
    server.push(say('fresh'));
    await runKeel(['-p', 'from scratch', '--continue'], { cwd: ws.dir, env });
    expect(plainMessages(server.messageRequests().at(-1)!.body.messages)).toEqual([{ role: 'user', content: 'from scratch' }]);
  }, 120_000);

  it('puts back byte for byte a Latin-1 file, a CRLF file with a BOM and a UTF-16 file, with their modes', async () => {
    const originals: Record<string, Buffer> = {
      'latin1.txt': Buffer.from('caf\xe9\r\nna\xefve\n', 'latin1'),
      'bom.txt': Buffer.from('\ufeffkey = 1\r\nother = 2\r\n', 'utf8'),
      'u16.txt': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('héllo\r\nwörld\n', 'utf16le')]),
    };
    const { env, ws } = await prepare([
      callTools(...Object.keys(originals).map((path) => ({ name: 'read_file', input: { path } }))),
      callTools(
        { name: 'write_file', input: { path: 'latin1.txt', content: 'rewritten\n' } },
        { name: 'edit_file', input: { path: 'bom.txt', old_string: 'key = 1\nother', new_string: 'key = 9\nother' } },
        { name: 'edit_file', input: { path: 'u16.txt', old_string: 'wörld', new_string: 'world' } },
      ),
      say('changed'),
    ]);
    for (const [name, bytes] of Object.entries(originals)) writeFileSync(ws.path(name), bytes, { mode: 0o750 });
    const run = await runKeel(['-p', 'change them', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    for (const name of Object.keys(originals)) expect(readFileSync(ws.path(name)).equals(originals[name]), `${name} changed`).toBe(false);
    const rewound = await runKeel(['-p', '/rewind 1 files', '--continue'], { cwd: ws.dir, env });
    expect(rewound.stderr).toBe('');
    expect(rewound.code).toBe(0);
    for (const [name, bytes] of Object.entries(originals)) {
      expect(readFileSync(ws.path(name)).equals(bytes), name).toBe(true);
      expect(statSync(ws.path(name)).mode & 0o777, name).toBe(0o750);
    }
  }, 120_000);

  it('rewinds only the files or only the conversation when asked, and keeps its store private', async () => {
    const { env, ws, server } = await prepare(threeTurns());
    await runTurns(env, ws.dir);
    const files = await runKeel(['-p', '/rewind 3 files', '--continue'], { cwd: ws.dir, env });
    expect(files.code).toBe(0);
    expect(files.stdout).not.toContain('Conversation');
    expect([read(ws.path('a.txt')), read(ws.path('b.txt')), read(ws.path('c.txt'))]).toEqual(['two\n', 'bee\n', 'sea\n']);

    const talk = await runKeel(['-p', '/rewind 3 conversation', '--continue'], { cwd: ws.dir, env });
    expect(talk.code).toBe(0);
    expect(talk.stdout).toBe('Conversation rewound to before turn 3: "third: edit a and b"\n');
    expect(read(ws.path('a.txt'))).toBe('two\n');
    server.push(say('ok'));
    await runKeel(['-p', 'again', '--continue'], { cwd: ws.dir, env });
    const prompts = plainMessages(server.messageRequests().at(-1)!.body.messages).filter((m) => typeof m.content === 'string').map((m) => m.content);
    expect(prompts).toEqual(['first: create a and b', 'second: edit a, add c', 'again']);

    const root = path.join(ws.home, 'checkpoints');
    const [dir] = readdirSync(root);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(root, dir)).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(root, dir, 'index.json')).mode & 0o777).toBe(0o600);
    for (const blob of readdirSync(path.join(root, dir, 'blobs'))) expect(statSync(path.join(root, dir, 'blobs', blob)).mode & 0o777).toBe(0o600);
  }, 120_000);

  it('names the fault for a turn that does not exist and an unknown target', async () => {
    const { env, ws } = await prepare([say('hi')]);
    await runKeel(['-p', 'hello'], { cwd: ws.dir, env });
    const missing = await runKeel(['-p', '/rewind 7', '--continue'], { cwd: ws.dir, env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('keel: /rewind: no turn 7 in this session (turns 1–1)\n');
    const target = await runKeel(['-p', '/rewind 1 everything', '--continue'], { cwd: ws.dir, env });
    expect(target.code).toBe(1);
    expect(target.stderr).toContain('unknown target "everything"');
    const word = await runKeel(['-p', '/rewind last', '--continue'], { cwd: ws.dir, env });
    expect(word.stderr).toContain('"last" is not a turn number');
  }, 120_000);
});
