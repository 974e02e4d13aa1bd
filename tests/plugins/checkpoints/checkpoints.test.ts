import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createKernel, defaultConfig, runAgent, startSession, type Kernel, type Plugin, type Session } from '../../../kernel/index.js';
import checkpoints from '../../../plugins/checkpoints/index.js';
import { CheckpointStore, pruneSessions } from '../../../plugins/checkpoints/store.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { callTool, say, startAnthropicServer, type ScriptStep, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let server: ScriptedServer | undefined;
let ws: Workspace | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
});

async function setup(script: ScriptStep[], extra: Plugin[] = [checkpoints()]): Promise<{ kernel: Kernel; session: Session; rewind(args: string): Promise<string> }> {
  server = await startAnthropicServer(script);
  ws = makeWorkspace();
  const kernel = createKernel({ config: defaultConfig({ apiKey: 'k', baseURL: server.url, cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home, permissionMode: 'auto' }) });
  for (const p of [queryAnthropic(), permissions(), toolsFs(), ...extra]) kernel.use(p);
  kernel.seal();
  const session = await startSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'auto' });
  const command = kernel.commands.get('rewind')!;
  const rewind = async (args: string) => String(await command.run(args, { kernel, session, print: () => undefined, signal: new AbortController().signal }));
  return { kernel, session, rewind };
}

describe('checkpoints', () => {
  it('notes a file over the size bound without keeping it, and says it cannot restore it', async () => {
    const { kernel, session, rewind } = await setup([callTool('write_file', { path: 'big.txt', content: 'small now' }), say('ok')], [checkpoints({ maxFileBytes: 10 })]);
    writeFileSync(ws!.path('big.txt'), 'x'.repeat(100));
    // write_file refuses files the session has not read: read it first through the tool.
    await kernel.tools.get('read_file')!.execute({ path: 'big.txt' }, { signal: new AbortController().signal, session, turn: { session, kernel, index: 0, signal: new AbortController().signal, data: new Map(), emit: () => undefined }, call: { id: 'r', name: 'read_file', input: {} }, kernel, cwd: session.cwd, emit: () => undefined });
    await runAgent(kernel, session, 'shrink big.txt');
    expect(readFileSync(ws!.path('big.txt'), 'utf8')).toBe('small now');
    const out = await rewind('1 files');
    expect(out).toContain('Not restored (content not kept):');
    expect(out).toContain('big.txt (too large to keep)');
    expect(readFileSync(ws!.path('big.txt'), 'utf8')).toBe('small now');
  });

  it('drops the oldest turns past the session bound, keeping the newest', async () => {
    const content = (c: string) => c.repeat(40);
    const { kernel, session, rewind } = await setup(
      [
        callTool('edit_file', { path: 'f.txt', old_string: '', new_string: content('a') }),
        say('1'),
        callTool('read_file', { path: 'f.txt' }),
        callTool('write_file', { path: 'f.txt', content: content('b') }),
        say('2'),
        callTool('read_file', { path: 'f.txt' }),
        callTool('write_file', { path: 'f.txt', content: content('c') }),
        say('3'),
      ],
      [checkpoints({ maxSessionBytes: 50 })],
    );
    for (const prompt of ['one', 'two', 'three']) await runAgent(kernel, session, prompt);
    const store = session.data.get('checkpoints') as CheckpointStore;
    expect(store.index.bytes).toBeLessThanOrEqual(50);
    expect(store.index.turns[1]!.files[0]).toMatchObject({ skipped: 'evicted' });
    expect(readdirSync(path.join(store.dir, 'blobs'))).toHaveLength(1);
    const out = await rewind('2 files');
    expect(out).toContain('dropped to keep checkpoints within their size bound');
    await rewind('3 files');
    expect(readFileSync(ws!.path('f.txt'), 'utf8')).toBe(content('b'));
  });

  it('rewinds files but keeps the conversation when it was compacted since that turn', async () => {
    const { kernel, session, rewind } = await setup([callTool('write_file', { path: 'n.txt', content: 'new' }), say('done')]);
    await runAgent(kernel, session, 'make n.txt');
    session.messages.splice(0, session.messages.length, { role: 'user', content: 'Summary of everything so far' });
    await expect(rewind('1 conversation')).rejects.toThrow('cannot rewind the conversation to turn 1: the conversation was compacted');
    const out = await rewind('1');
    expect(out).toContain('removed n.txt');
    expect(out).toContain('Conversation kept: the conversation was compacted since that turn');
    expect(existsSync(ws!.path('n.txt'))).toBe(false);
    expect(session.messages).toHaveLength(1);
  });

  it('a forked session starts with its parent checkpoints; a corrupt index names its file', async () => {
    ws = makeWorkspace();
    const root = path.join(ws.home, 'checkpoints');
    const parent = new CheckpointStore(root, 'parent', { maxFileBytes: 1e6, maxSessionBytes: 1e6, maxSessions: 10 });
    const turn = parent.addTurn({ prompt: 'p', messageIndex: 0, promptHash: 'h', at: new Date().toISOString() });
    parent.snapshot(turn, ws.write('x.txt', 'x'));
    CheckpointStore.copy(root, 'parent', 'child');
    const child = new CheckpointStore(root, 'child', parent.limits);
    expect(child.index.turns).toHaveLength(1);
    expect(child.readBlob(child.index.turns[0]!.files[0]!.blob!).toString()).toBe('x');
    writeFileSync(path.join(root, 'child', 'index.json'), '{broken');
    expect(() => new CheckpointStore(root, 'child', parent.limits)).toThrow(`${path.join(root, 'child', 'index.json')}: not a checkpoint index`);
    pruneSessions(root, 1, 'parent');
    expect(readdirSync(root)).toEqual(['parent']);
  });

  it('prunes the least recently used sessions past the limit, and none within it', () => {
    ws = makeWorkspace();
    const root = path.join(ws.home, 'checkpoints');
    const limits = { maxFileBytes: 1e6, maxSessionBytes: 1e6, maxSessions: 3 };
    for (const [i, id] of ['old', 'mid', 'new', 'current'].entries()) {
      const store = new CheckpointStore(root, id, limits);
      store.addTurn({ prompt: id, messageIndex: 0, promptHash: id, at: new Date().toISOString() });
      const at = new Date(1_700_000_000_000 + i * 60_000);
      utimesSync(path.join(root, id, 'index.json'), at, at);
    }
    pruneSessions(root, 5, 'current');
    expect(readdirSync(root).sort()).toEqual(['current', 'mid', 'new', 'old']);
    pruneSessions(root, 3, 'current');
    expect(readdirSync(root).sort()).toEqual(['current', 'mid', 'new']);
  });

  it('past the limit, prunes a tenth more, so the next starts find it within the limit', () => {
    ws = makeWorkspace();
    const root = path.join(ws.home, 'checkpoints');
    const limits = { maxFileBytes: 1e6, maxSessionBytes: 1e6, maxSessions: 20 };
    const ids = Array.from({ length: 21 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    for (const [i, id] of [...ids, 'current'].entries()) {
      const store = new CheckpointStore(root, id, limits);
      store.addTurn({ prompt: id, messageIndex: 0, promptHash: id, at: new Date().toISOString() });
      const at = new Date(1_700_000_000_000 + i * 60_000);
      utimesSync(path.join(root, id, 'index.json'), at, at);
    }
    pruneSessions(root, 20, 'current');
    // 19 others would be within the limit; 2 more go: the 17 most recently used stay, with the current one.
    expect(readdirSync(root).sort()).toEqual([...ids.slice(4), 'current'].sort());
    pruneSessions(root, 20, 'new-one');
    expect(readdirSync(root)).toHaveLength(18);
  });
});
