import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageParam } from '../../../kernel/index.js';
import { formatList, listJson, listSessions } from '../../../plugins/session-store/list.js';
import { newestSessionId } from '../../../plugins/session-store/resolve.js';
import { lineStartsBackward, loadSession, prefixedLinesBackward } from '../../../plugins/session-store/reader.js';
import { INTERRUPTED } from '../../../plugins/session-store/repair.js';
import { createRedactor } from '../../../plugins/session-store/secrets.js';
import { SessionWriter } from '../../../plugins/session-store/writer.js';
import { say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { projectDir } from '../../../plugins/session-store/paths.js';
import { harness, records } from './setup.js';

let ws: Workspace;
let server: ScriptedServer | undefined;
beforeEach(() => {
  ws = makeWorkspace();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  ws.cleanup();
});

const header = (id = 's1', extra: Record<string, unknown> = {}) => ({ type: 'header', version: 1, id, cwd: ws.dir, projectRoot: ws.dir, model: 'm', preset: 'default', createdAt: '2026-01-01T00:00:00.000Z', ...extra });
const msg = (message: MessageParam, extra: Record<string, unknown> = {}) => ({ type: 'message', at: 1, message, ...extra });
const user = (text: string) => msg({ role: 'user', content: text });
const assistant = (text: string, turns: number, costUsd = 0) => msg({ role: 'assistant', content: [{ type: 'text', text }] }, { stats: { turns, costUsd } });
const toolUse = (id: string, turns: number) => msg({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'echo', input: {} }] }, { stats: { turns, costUsd: 0 } });
const toolResult = (id: string, content = 'out') => msg({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] });

function sessionPath(id = 's1'): string {
  const dir = projectDir(ws.home, ws.dir);
  mkdirSync(dir, { recursive: true });
  return path.join(dir, `${id}.jsonl`);
}

function writeLines(file: string, lines: Array<object | string>, tail = '\n'): void {
  writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + tail);
}

async function load(file: string) {
  const warnings: string[] = [];
  const loaded = await loadSession(file, { sideDir: file.replace(/\.jsonl$/, ''), warn: (m) => warnings.push(m) });
  return { ...loaded, warnings };
}

describe('reading session files', () => {
  it('ignores a torn last line, and opening for append cuts it', async () => {
    const file = sessionPath();
    writeLines(file, [header(), user('hello'), assistant('hi', 1)]);
    appendFileSync(file, '{"type":"message","at":1,"message":{"role":"user","content":"LEAKED');
    const loaded = await load(file);
    expect(loaded.messages).toHaveLength(2);
    expect(JSON.stringify(loaded.messages)).not.toContain('LEAKED');
    expect(loaded.warnings).toEqual([]);
    expect(loaded.lines).toBe(3);
    expect(loaded.tornBytes).toBeGreaterThan(0);

    const writer = new SessionWriter(file, { fsync: true, redact: createRedactor([]), id: 'torn' }, loaded.lines);
    expect(writer.open()).toEqual({ created: false, cutBytes: loaded.tornBytes });
    writer.append(user('after') as never);
    writer.sync();
    writer.close();
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('LEAKED');
    expect(records(file).map((r) => r.type)).toEqual(['header', 'message', 'message', 'message']);
  });

  it('skips a corrupt middle line with a warning naming it', async () => {
    const file = sessionPath();
    writeLines(file, [header(), user('one'), '{"type":"message","at":1,"mess', assistant('two', 1), '[1,2]', { type: 'message', message: { role: 'robot' } }, user('three')]);
    const loaded = await load(file);
    expect(loaded.messages.map((m) => m.content)).toEqual(['one', [{ type: 'text', text: 'two' }], 'three']);
    expect(loaded.corruptLines).toBe(3);
    expect(loaded.warnings).toEqual([
      `${file}: line 3 is corrupt (not valid JSON); skipped`,
      `${file}: line 5 is corrupt (not a record (no "type")); skipped`,
      `${file}: line 6 is corrupt (message record with a message of no known role); skipped`,
    ]);
  });

  it('skips a message whose blocks lack what every reader of a history relies on, naming the block; other types pass', async () => {
    const file = sessionPath();
    const bad = (content: unknown, role = 'assistant') => ({ type: 'message', at: 1, message: { role, content } });
    writeLines(file, [
      header(),
      user('one'),
      bad([{ type: 'text', text: 'fine' }, { type: 'text' }]),
      bad([{ type: 'tool_use', name: 'bash', input: {} }]),
      bad([{ type: 'tool_result', tool_use_id: 't1', content: 42 }], 'user'),
      bad([{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'image' }] }], 'user'),
      bad(['just a string']),
      { type: 'boundary', at: 1, trigger: 'auto', messages: [{ role: 'user', content: [{ type: 'thinking' }] }], stats: { turns: 1, costUsd: 0 } },
      bad([{ type: 'text', text: 'two' }, { type: 'a_newer_block', anything: 1 }]),
    ]);
    const loaded = await load(file);
    expect(loaded.messages.map((m) => m.content)).toEqual(['one', [{ type: 'text', text: 'two' }, { type: 'a_newer_block', anything: 1 }]]);
    expect(loaded.warnings).toEqual([
      `${file}: the compaction boundary at byte ${readFileSync(file, 'utf8').indexOf('{"type":"boundary"')} is corrupt (boundary record with a thinking block without its text (block 1) (message 1)); using an earlier one`,
      `${file}: line 3 is corrupt (message record with a text block without its text (block 2)); skipped`,
      `${file}: line 4 is corrupt (message record with a tool_use block without an id and a name (block 1)); skipped`,
      `${file}: line 5 is corrupt (message record with content that is neither text nor blocks in a tool_result (block 1)); skipped`,
      `${file}: line 6 is corrupt (message record with an image block without a source in a tool_result (block 1)); skipped`,
      `${file}: line 7 is corrupt (message record with a content block without a type (block 1)); skipped`,
      `${file}: line 8 is corrupt (boundary record with a thinking block without its text (block 1) (message 1)); skipped`,
    ]);
  });

  it('skips records of unknown types silently (a newer format)', async () => {
    const file = sessionPath();
    writeLines(file, [header(), user('one'), { type: 'future-thing', x: 1 }, assistant('two', 1)]);
    const loaded = await load(file);
    expect(loaded.messages).toHaveLength(2);
    expect(loaded.warnings).toEqual([]);
  });

  it('answers a tool_use left without a result with an "interrupted" error result', async () => {
    const file = sessionPath();
    writeLines(file, [header(), user('go'), toolUse('toolu_x', 1)]);
    const loaded = await load(file);
    expect(loaded.fromFile).toBe(2);
    expect(loaded.tailFix).toBeDefined();
    expect(loaded.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: INTERRUPTED, is_error: true }] });
  });

  it('drops a tool_result whose tool_use was on a corrupt line', async () => {
    const file = sessionPath();
    writeLines(file, [header(), user('go'), 'garbage', toolResult('toolu_lost'), assistant('done', 2)]);
    const loaded = await load(file);
    expect(loaded.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(loaded.repairs).toBe(1);
    expect(loaded.warnings).toHaveLength(1);
  });

  it('starts from the last readable boundary; a corrupt one falls back to the one before', async () => {
    const file = sessionPath();
    const boundary = (line: number, text: string) => ({ type: 'boundary', at: 1, line, trigger: 'auto', messages: [{ role: 'user', content: text }], stats: { turns: line, costUsd: 0 } });
    writeLines(file, [header(), user('a'), boundary(3, 'FIRST'), user('b'), '{"type":"boundary","at":1,"line":5,"trig', user('c')]);
    const loaded = await load(file);
    expect(loaded.startLine).toBe(3);
    expect(loaded.messages.map((m) => m.content)).toEqual(['FIRST', 'b', 'c']);
    expect(loaded.warnings[0]).toMatch(/the compaction boundary at byte \d+ is corrupt \(not valid JSON\); using an earlier one/);
    expect(loaded.warnings[1]).toBe(`${file}: line 5 is corrupt (not valid JSON); skipped`);
    expect(loaded.stats.turns).toBe(3);
  });

  it('finds boundaries and lines across read chunks (lines longer than 64 KiB)', async () => {
    const file = sessionPath();
    const huge = 'z'.repeat(200_000);
    const lines = [header(), user(huge), { type: 'boundary', at: 1, line: 3, trigger: 'auto', messages: [{ role: 'user', content: huge }], stats: { turns: 1, costUsd: 0 } }, user(huge), user('end')];
    writeLines(file, lines);
    const loaded = await load(file);
    expect(loaded.startLine).toBe(3);
    expect(loaded.messages.map((m) => (m.content as string).length)).toEqual([200_000, 200_000, 3]);
    const fd = openSync(file, 'r');
    const starts = [...lineStartsBackward(fd, statSync(file).size)];
    closeSync(fd);
    const expected: number[] = [];
    let offset = 0;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(0, -1)) {
      expected.unshift(offset);
      offset += Buffer.byteLength(line) + 1;
    }
    expect(starts).toEqual(expected);
  });

  it('finds every prefixed line start whatever the read size (matches straddling two reads included)', () => {
    const file = sessionPath();
    const lines = ['{"type":"header"}', 'BOUNDARY one', 'x', 'BOUNDARY', 'yyBOUNDARY not at a start', 'BOUNDARY three', 'zz', 'BOUNDARY'];
    writeFileSync(file, `${lines.join('\n')}\n`);
    const expected: number[] = [];
    let offset = 0;
    lines.forEach((line, i) => {
      if (i > 0 && line.startsWith('BOUNDARY')) expected.unshift(offset);
      offset += line.length + 1;
    });
    const fd = openSync(file, 'r');
    try {
      for (let size = 1; size <= offset + 2; size++) {
        expect([...prefixedLinesBackward(fd, offset, Buffer.from('BOUNDARY'), size)], `read size ${size}`).toEqual(expected);
      }
    } finally {
      closeSync(fd);
    }
  });

  it('refuses an empty or wholly torn file with a message naming it', async () => {
    const file = sessionPath();
    writeFileSync(file, '{"type":"header","id":"s1"');
    await expect(load(file)).rejects.toThrow(`${file}: no complete record (the file is empty or its only line is torn)`);
  });

  it('resumes a session whose last tool call was cut off, and writes the synthesized result', async () => {
    const file = sessionPath('crashed');
    writeLines(file, [header('crashed'), user('go'), toolUse('toolu_y', 1)]);
    appendFileSync(file, '{"type":"mess');
    server = await startAnthropicServer([say('resumed fine')]);
    const h = harness(server, ws);
    const session = await h.start({ resume: { id: 'crashed' } });
    const onDisk = records(file);
    expect(onDisk.map((r) => r.type)).toEqual(['header', 'message', 'message', 'message']);
    expect(onDisk[3].message.content[0]).toMatchObject({ tool_use_id: 'toolu_y', is_error: true });
    await h.run(session, 'carry on');
    const sent = server.messageRequests()[0].body.messages;
    expect(sent.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user', 'user']);
    expect(JSON.stringify(sent[2])).toContain('Interrupted');
    const again = await load(file);
    expect(again.repairs).toBe(0);
    expect(again.messages).toHaveLength(5);
  });
});

describe('listing sessions', () => {
  it('lists id, last activity, first prompt, turns and cost, newest first, from head and tail only', async () => {
    const a = sessionPath('aaaa');
    writeLines(a, [header('aaaa'), user('fix the\nparser please'), assistant('ok', 1, 0.01), { type: 'usage', at: 1, tier: 'small', model: 'h', usage: {}, costUsd: 0.5, stats: { turns: 1, costUsd: 0.51 } }, user('later')]);
    const b = sessionPath('bbbb');
    writeLines(b, [header('bbbb', { parent: 'aaaa' }), { type: 'boundary', at: 1, line: 2, trigger: 'fork', messages: [{ role: 'user', content: 'forked prompt' }], stats: { turns: 4, costUsd: 2 } }]);
    utimesSync(a, new Date('2026-03-01T10:00:00Z'), new Date('2026-03-01T10:00:00Z'));
    utimesSync(b, new Date('2026-03-02T10:00:00Z'), new Date('2026-03-02T10:00:00Z'));
    writeFileSync(sessionPath('empty'), '');

    const list = await listSessions(projectDir(ws.home, ws.dir));
    expect(list.map((s) => [s.id, s.firstPrompt, s.turns, s.costUsd, s.parent])).toEqual([
      ['bbbb', 'forked prompt', 4, 2, 'aaaa'],
      ['aaaa', 'fix the\nparser please', 1, 0.51, undefined],
    ]);
    const table = formatList(list, ws.dir).split('\n');
    expect(table[0]).toMatch(/^ID\s+LAST ACTIVITY\s+TURNS\s+COST\s+FIRST PROMPT$/);
    expect(table[1]).toMatch(/^bbbb\s+2026-03-0\d \d\d:\d\d\s+4\s+\$2\.0000\s+forked prompt$/);
    expect(table[2]).toMatch(/^aaaa\s+.*\s+1\s+\$0\.5100\s+fix the parser please$/);
    // The hint fits the build: plain --resume opens the interactive UI, so only a build with one suggests it.
    expect(table[table.length - 1]).toBe('Resume one with: keel -p "<your next request>" --resume <id>');
    expect(formatList(list, ws.dir, true).split('\n').pop()).toBe('Resume one with: keel --resume <id>');
    expect(JSON.parse(listJson(list))[1]).toEqual({
      id: 'aaaa', last_activity: '2026-03-01T10:00:00.000Z', first_prompt: 'fix the\nparser please', turns: 1, cost_usd: 0.51, parent_session_id: null, subagent: false, bytes: statSync(a).size,
    });
  });

  it("leaves sub-agents' sessions and sessions without a model turn out of listings and --continue, unless asked", async () => {
    const at = (file: string, minute: number) => utimesSync(file, new Date(2026, 2, 1, 10, minute), new Date(2026, 2, 1, 10, minute));
    const own = sessionPath('own');
    writeLines(own, [header('own'), user('the real work'), assistant('ok', 1, 0.01)]);
    at(own, 1);
    // Newer: a sub-agent's session marked as such, a legacy one (a parent without a fork's boundary), a failed run.
    const child = sessionPath('child');
    writeLines(child, [header('child', { parent: 'own', subagent: true }), user('CHILD task'), assistant('done', 3, 0.02)]);
    at(child, 2);
    const legacy = sessionPath('legacy');
    writeLines(legacy, [header('legacy', { parent: 'own' }), user('older child task'), assistant('done', 1, 0.01)]);
    at(legacy, 3);
    const failed = sessionPath('failed');
    writeLines(failed, [header('failed'), user('the key was wrong')]);
    at(failed, 4);
    // A fork names its source too, but is the user's own session.
    const fork = sessionPath('fork');
    writeLines(fork, [header('fork', { parent: 'own' }), { type: 'boundary', at: 1, line: 2, trigger: 'fork', messages: [{ role: 'user', content: 'forked' }], stats: { turns: 1, costUsd: 0 } }]);
    at(fork, 0);

    const dir = projectDir(ws.home, ws.dir);
    expect((await listSessions(dir)).map((s) => s.id)).toEqual(['own', 'fork']);
    expect((await listSessions(dir, { all: true })).map((s) => [s.id, s.subagent])).toEqual([
      ['failed', false], ['legacy', true], ['child', true], ['own', false], ['fork', false],
    ]);
    expect(await newestSessionId(dir)).toBe('own');
    const table = formatList(await listSessions(dir), ws.dir, false, 3).split('\n');
    expect(table).toContain('3 sub-agent or empty sessions not shown (keel sessions --all lists them).');
    expect(formatList(await listSessions(dir, { all: true }), ws.dir)).toContain('(sub-agent) CHILD task');
  });

  it('--continue with only sub-agent or empty sessions names them and how to open one', async () => {
    writeLines(sessionPath('child'), [header('child', { parent: 'gone', subagent: true }), user('CHILD task'), assistant('done', 1, 0.01)]);
    await expect(newestSessionId(projectDir(ws.home, ws.dir))).rejects.toThrow('--continue: this project has no session of its own to continue (only 1 sub-agent or empty one; keel sessions --all lists them, --resume <id> opens one)');
  });

  it('says so when the project has no sessions', async () => {
    expect(formatList(await listSessions(path.join(ws.home, 'nowhere')), ws.dir)).toBe(`No sessions for ${ws.dir} yet.`);
  });

  it('is the sessions command', async () => {
    server = await startAnthropicServer([say('a')]);
    const h = harness(server, ws);
    const session = await h.start();
    await h.run(session, 'the first prompt');
    const command = h.kernel.commands.get('sessions')!;
    const ctx = { kernel: h.kernel, session, print: () => {}, signal: new AbortController().signal };
    expect(await command.run('', ctx)).toMatch(new RegExp(`^${session.id}\\s.*\\s1\\s+\\$\\d+\\.\\d{4}\\s+the first prompt$`, 'm'));
    expect(JSON.parse((await command.run('--json', ctx)) as string)[0]).toMatchObject({ id: session.id, turns: 1, first_prompt: 'the first prompt' });
  });
});
