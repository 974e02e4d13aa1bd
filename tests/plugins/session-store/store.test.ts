import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callTool, say, startAnthropicServer, type ScriptedServer, type ScriptStep } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { projectDir, projectSlug } from '../../../plugins/session-store/paths.js';
import { API_KEY, harness, records } from './setup.js';

let server: ScriptedServer;
let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
});
afterEach(async () => {
  await server?.close();
  ws.cleanup();
});

async function serve(script: ScriptStep[]) {
  server = await startAnthropicServer(script);
  return server;
}

const text = (message: { content: unknown }) => JSON.stringify(message.content);

describe('session-store: recording', () => {
  it('writes one JSONL record per message under $KEEL_HOME/sessions/<project>/<id>.jsonl', async () => {
    await serve([callTool('echo', { text: 'tool output' }, 'toolu_a', 'looking'), say('all done')]);
    const h = harness(server, ws);
    const session = await h.start();
    const result = await h.run(session, 'please echo');
    expect(result.result).toBe('all done');

    const file = h.store.fileOf(session)!;
    expect(file).toBe(path.join(ws.home, 'sessions', projectSlug(ws.dir), `${session.id}.jsonl`));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const recs = records(file);
    expect(recs[0]).toMatchObject({ type: 'header', version: 1, id: session.id, cwd: ws.dir, projectRoot: ws.dir, model: session.model });
    const messages = recs.filter((r) => r.type === 'message').map((r) => r.message);
    expect(messages).toEqual(session.messages.map((m) => JSON.parse(JSON.stringify(m))));
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const assistants = recs.filter((r) => r.type === 'message' && r.message.role === 'assistant');
    expect(assistants[0].response).toMatchObject({ stopReason: 'tool_use', usage: { input_tokens: 10, output_tokens: 5 } });
    expect(assistants.map((r) => r.stats.turns)).toEqual([1, 2]);
    // Every record starts with its type, so boundaries can be found by prefix.
    for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) expect(line.startsWith('{"type":"')).toBe(true);
  });

  it('creates no file for a session that never records anything', async () => {
    await serve([]);
    const h = harness(server, ws);
    await h.start();
    expect(existsSync(path.join(ws.home, 'sessions'))).toBe(false);
  });

  it('records a message appended without an event (the loop’s max_tokens nudge)', async () => {
    await serve([say('cut off', { stopReason: 'max_tokens' }), say('finished')]);
    const h = harness(server, ws);
    const session = await h.start();
    await h.run(session, 'write a lot');
    const messages = records(h.store.fileOf(session)!).filter((r) => r.type === 'message').map((r) => r.message);
    expect(messages).toHaveLength(session.messages.length);
    expect(text(messages[2])).toContain('Continue exactly where you stopped');
  });

  it('moves big tool outputs to side files and puts them back on resume', async () => {
    const big = 'x'.repeat(40_000);
    await serve([callTool('echo', { text: 'x', times: 40_000 }, 'toolu_big'), say('ok'), say('again')]);
    const h = harness(server, ws, { sideFileBytes: 1000 });
    const session = await h.start();
    await h.run(session, 'big output please');
    const file = h.store.fileOf(session)!;
    const recs = records(file);
    const results = recs.find((r) => r.type === 'message' && r.refs)!;
    expect(results.refs).toEqual([{ b: 0, file: expect.stringMatching(/^toolu_big-[0-9a-f]{12}\.json$/) }]);
    expect(readFileSync(file, 'utf8').length).toBeLessThan(5000);
    expect(readdirSync(path.join(path.dirname(file), session.id))).toEqual([results.refs[0].file]);

    const h2 = harness(server, ws);
    const resumed = await h2.start({ resume: { id: session.id } });
    expect(resumed.messages).toEqual(JSON.parse(JSON.stringify(session.messages)));
    await h2.run(resumed, 'next');
    expect(JSON.stringify(server.messageRequests()[2].body.messages)).toContain(big);
  });

  it('replaces a missing side file by a note and warns', async () => {
    await serve([callTool('echo', { text: 'y', times: 5000 }, 'toolu_gone'), say('ok')]);
    const h = harness(server, ws, { sideFileBytes: 100 });
    const session = await h.start();
    await h.run(session, 'go');
    rmSync(path.join(projectDir(ws.home, ws.dir), session.id), { recursive: true });
    const h2 = harness(server, ws);
    const resumed = await h2.start({ resume: { id: session.id } });
    expect(text(resumed.messages[2])).toContain('tool output unavailable');
    // Logged while the session starts: frontends listen from before sessionStart.
    const lines = readFileSync(h.store.fileOf(session)!, 'utf8').split('\n');
    const refLine = lines.findIndex((line) => line.includes('"refs"')) + 1;
    expect(h2.warnings()).toHaveLength(1);
    expect(h2.warnings()[0]).toContain(`line ${refLine}: side file `);
    expect(h2.warnings()[0]).toMatch(/toolu_gone-[0-9a-f]+\.json is missing or unreadable/);
    await h2.run(resumed, 'next');
    expect(h2.warnings()).toHaveLength(1);
  });

  it.each([
    ['a number', '42'],
    ['blocks without a type', '[{"text":"x"}]'],
    ['no JSON', '{"cut'],
  ])('replaces a side file that holds %s by the same note, and the next request goes out', async (_what, body) => {
    await serve([callTool('echo', { text: 'y', times: 5000 }, 'toolu_odd'), say('ok'), say('next answer')]);
    const h = harness(server, ws, { sideFileBytes: 100 });
    const session = await h.start();
    await h.run(session, 'go');
    const side = path.join(projectDir(ws.home, ws.dir), session.id);
    const [name] = readdirSync(side);
    writeFileSync(path.join(side, name!), body);
    const h2 = harness(server, ws);
    const resumed = await h2.start({ resume: { id: session.id } });
    expect(text(resumed.messages[2])).toContain(`[tool output unavailable: side file ${name} is missing or unreadable]`);
    expect(h2.warnings()).toEqual([expect.stringContaining(`side file ${path.join(side, name!)} is missing or unreadable (`)]);
    expect((await h2.run(resumed, 'next')).result).toBe('next answer');
  });

  it('never writes the API key, wherever it appears', async () => {
    await serve([callTool('echo', { text: `the key is ${API_KEY}` }, 'toolu_k'), say(`echoing ${API_KEY}`)]);
    const h = harness(server, ws);
    const session = await h.start();
    await h.run(session, `my key: ${API_KEY} and another sk-ant-admin01-abcdefghijklmnop`);
    const raw = readFileSync(h.store.fileOf(session)!, 'utf8');
    expect(raw).not.toContain('SECRETSECRET');
    expect(raw).not.toContain('sk-ant-admin01-abcdefghijklmnop');
    expect(raw).toContain('[REDACTED]');
  });

  it('keeps records of usage events with running cost, counted once', async () => {
    await serve([say('one'), say('two')]);
    const h = harness(server, ws);
    const session = await h.start();
    await h.run(session, 'a');
    h.kernel.emit({ type: 'usage', usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }, costUsd: 0.5, model: 'claude-haiku-5-5', tier: 'small' });
    await h.run(session, 'b');
    const recs = records(h.store.fileOf(session)!);
    const small = recs.find((r) => r.type === 'usage' && r.tier === 'small')!;
    expect(small.stats.costUsd).toBeGreaterThanOrEqual(0.5);
    const last = recs.filter((r) => r.stats).at(-1)!;
    const mainCosts = recs.filter((r) => r.type === 'usage' && r.tier === 'main').reduce((sum, r) => sum + r.costUsd, 0);
    expect(last.stats.costUsd).toBeCloseTo(mainCosts + 0.5, 10);
    expect(last.stats.turns).toBe(2);
  });

  it('reports a file it cannot write once and lets the run finish', async () => {
    await serve([say('one'), say('two')]);
    const h = harness(server, ws);
    const session = await h.start();
    mkdirSync(path.join(projectDir(ws.home, ws.dir), `${session.id}.jsonl`), { recursive: true });
    const result = await h.run(session, 'a');
    await h.run(session, 'b');
    expect(result.result).toBe('one');
    const errors = h.events.filter((e) => e.type === 'log' && e.level === 'error');
    expect(errors).toHaveLength(1);
    expect((errors[0] as { message: string }).message).toMatch(/cannot write session file .*\.jsonl: .*no longer saved/);
  });
});

describe('session-store: resume, continue, fork', () => {
  it('resumes by id: the next request carries the whole history', async () => {
    await serve([callTool('echo', { text: 'out' }, 'toolu_1'), say('first answer'), say('second answer')]);
    const h = harness(server, ws);
    const first = await h.start();
    await h.run(first, 'first question');

    const h2 = harness(server, ws);
    const resumed = await h2.start({ resume: { id: first.id } });
    expect(resumed.id).toBe(first.id);
    expect(resumed.resumedFrom).toBe(first.id);
    expect(resumed.messages).toHaveLength(4);
    await h2.run(resumed, 'second question');
    const body = server.messageRequests()[2].body;
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(JSON.stringify(body.messages[0])).toContain('first question');
    // Appended to the same file, header untouched.
    const recs = records(h2.store.fileOf(resumed)!);
    expect(recs.filter((r) => r.type === 'header')).toHaveLength(1);
    expect(recs.filter((r) => r.type === 'message')).toHaveLength(6);
    expect(recs.at(-1)!.stats.turns).toBe(3);
  });

  it('accepts a unique prefix of an id', async () => {
    await serve([say('a')]);
    const h = harness(server, ws);
    const first = await h.start();
    await h.run(first, 'q');
    const resumed = await harness(server, ws).start({ resume: { id: first.id.slice(0, 8) } });
    expect(resumed.id).toBe(first.id);
  });

  it('continues the newest session of the project', async () => {
    await serve([say('old'), say('new')]);
    const h = harness(server, ws, { now: () => 1000 });
    const older = await h.start();
    await h.run(older, 'older');
    const newer = await h.start();
    await h.run(newer, 'newer');
    // Activity is the file's mtime: make the order unambiguous.
    const { utimesSync } = await import('node:fs');
    utimesSync(h.store.fileOf(older)!, new Date(1_000_000), new Date(1_000_000));
    const resumed = await harness(server, ws).start({ resume: { latest: true } });
    expect(resumed.id).toBe(newer.id);
    expect(text(resumed.messages[0])).toContain('newer');
  });

  it('forks into a new session whose header names its parent; the parent file is untouched', async () => {
    await serve([say('a'), say('b')]);
    const h = harness(server, ws);
    const parent = await h.start();
    await h.run(parent, 'original');
    const parentFile = h.store.fileOf(parent)!;
    const before = readFileSync(parentFile, 'utf8');

    const h2 = harness(server, ws);
    const fork = await h2.start({ resume: { id: parent.id, fork: true } });
    expect(fork.id).not.toBe(parent.id);
    expect(fork.parentSessionId).toBe(parent.id);
    expect(fork.messages).toHaveLength(2);
    await h2.run(fork, 'in the fork');
    expect(readFileSync(parentFile, 'utf8')).toBe(before);
    const recs = records(h2.store.fileOf(fork)!);
    expect(recs[0]).toMatchObject({ type: 'header', id: fork.id, parent: parent.id });
    expect(recs[1]).toMatchObject({ type: 'boundary', trigger: 'fork', from: parent.id, line: 2 });

    const again = await harness(server, ws).start({ resume: { id: fork.id } });
    expect(again.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  });

  it.each([
    [{ id: 'no-such-session' }, /--resume: no session "no-such-session" in this project \(run keel sessions to list them\)/],
    [{ id: '../../etc/passwd' }, /--resume: "\.\.\/\.\.\/etc\/passwd" is not a session id/],
    [{ latest: true }, /--continue: this project has no session to continue yet/],
  ])('fails with one clear line for %j', async (resume, message) => {
    await serve([]);
    const h = harness(server, ws);
    const error = await h.start({ resume }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).toMatch(message);
    expect(error?.message.split('\n')).toHaveLength(1);
  });

  it('rejects an ambiguous prefix', async () => {
    await serve([say('a'), say('b')]);
    const h = harness(server, ws);
    for (const id of ['abc-1', 'abc-2']) await h.run(await h.start({ id }), 'q');
    await expect(harness(server, ws).start({ resume: { id: 'abc' } })).rejects.toThrow(/"abc" matches 2 sessions/);
  });

  it('starts a new session for --resume without an id (a frontend picks before starting)', async () => {
    await serve([]);
    const session = await harness(server, ws).start({ resume: { fork: false } });
    expect(session.resumedFrom).toBeUndefined();
    expect(session.messages).toEqual([]);
  });
});

describe('session-store: compaction boundaries', () => {
  it('records a boundary on a compact event and resumes from it', async () => {
    await serve([say('one'), say('two'), say('three'), say('four')]);
    const h = harness(server, ws);
    const session = await h.start();
    await h.run(session, 'q1');
    await h.run(session, 'q2');
    // What a compaction tier does: rewrite the history, then announce it.
    session.messages.splice(0, session.messages.length, { role: 'user', content: 'SUMMARY of q1 and q2' }, { role: 'assistant', content: [{ type: 'text', text: 'noted' }] });
    h.kernel.emit({ type: 'compact', trigger: 'auto', preTokens: 900, postTokens: 40, tier: 'compact-auto' });
    await h.run(session, 'q3');

    const file = h.store.fileOf(session)!;
    const recs = records(file);
    const boundaryLine = recs.findIndex((r) => r.type === 'boundary') + 1;
    expect(boundaryLine).toBeGreaterThan(5);
    expect(recs[boundaryLine - 1]).toMatchObject({ trigger: 'auto', preTokens: 900, postTokens: 40, line: boundaryLine });

    const { loadSession } = await import('../../../plugins/session-store/reader.js');
    const loaded = await loadSession(file, { sideDir: path.join(path.dirname(file), session.id), warn: () => {} });
    expect(loaded.startLine).toBe(boundaryLine);
    expect(loaded.lines).toBe(recs.length);
    expect(loaded.bytesStreamed).toBeLessThan(statSync(file).size / 2);
    expect(loaded.messages.map((m) => text(m))).toEqual([
      '"SUMMARY of q1 and q2"',
      '[{"type":"text","text":"noted"}]',
      '"q3"',
      expect.stringContaining('three'),
    ]);

    const resumed = await harness(server, ws).start({ resume: { id: session.id } });
    expect(resumed.messages).toHaveLength(4);
    expect(text(resumed.messages[0])).toContain('SUMMARY');
  });

  it('records a rewritten history as a boundary even without a compact event', async () => {
    await serve([say('one'), say('two')]);
    const h = harness(server, ws);
    const session = await h.start();
    await h.run(session, 'q1');
    session.messages.splice(0, 2, { role: 'user', content: 'short' }, { role: 'assistant', content: 'ok' });
    await h.run(session, 'q2');
    const recs = records(h.store.fileOf(session)!);
    expect(recs.find((r) => r.type === 'boundary')).toMatchObject({ trigger: 'rewrite' });
    const resumed = await harness(server, ws).start({ resume: { id: session.id } });
    expect(resumed.messages.map((m) => text(m)).slice(0, 3)).toEqual(['"short"', '"ok"', '"q2"']);
  });
});
