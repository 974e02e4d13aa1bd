/**
 * Sessions through the built CLI: list, resume, continue, fork, corrupt files, and the crash test: a real
 * `keel -p` killed with SIGKILL at a seeded point of a scripted session, 50 times, then resumed.
 */
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MessageParam } from '../../kernel/index.js';
import { loadSession } from '../../plugins/session-store/reader.js';
import { projectDir } from '../../plugins/session-store/paths.js';
import { processStart } from '../../plugins/session-store/lock.js';
import { say, startAnthropicServer, type ScriptStep, type ScriptedTurn } from '../helpers/anthropic-server.js';
import { collect, runKeel, spawnKeel } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';
import { scriptedProjects } from '../helpers/scripted-project.js';

const fixture = scriptedProjects();
const prepare = (script: ScriptStep[]) => fixture.project(script);

const sessionsDir = (ws: Workspace) => projectDir(ws.home, ws.dir);
const sessionIds = (ws: Workspace) => (existsSync(sessionsDir(ws)) ? readdirSync(sessionsDir(ws)).filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -6)) : []);
const jsonLines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

describe('keel sessions, --resume, --continue, --fork-session', () => {
  it('records a -p run, lists it, and resumes it with its history', async () => {
    const { server, ws, env } = await prepare([say('first answer'), say('second answer')]);
    const first = await runKeel(['-p', 'remember the word kestrel', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(first.code).toBe(0);
    const id = JSON.parse(first.stdout).session_id as string;
    expect(sessionIds(ws)).toEqual([id]);

    const list = await runKeel(['sessions'], { cwd: ws.dir, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${id}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+1\\s+\\$\\d+\\.\\d{4}\\s+remember the word kestrel$`, 'm'));
    // This build has no interactive frontend, so the hint is the headless form (which the next step runs).
    expect(list.stdout.trimEnd().split('\n').pop()).toBe('Resume one with: keel -p "<your next request>" --resume <id>');
    const asJson = await runKeel(['sessions', '--json'], { cwd: ws.dir, env });
    expect(JSON.parse(asJson.stdout)).toEqual([expect.objectContaining({ id, turns: 1, first_prompt: 'remember the word kestrel' })]);

    const resumed = await runKeel(['-p', 'what was the word?', '--resume', id, '--output-format', 'json'], { cwd: ws.dir, env });
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ session_id: id, result: 'second answer' });
    const sent = server.messageRequests()[1].body.messages as MessageParam[];
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(sent[0])).toContain('kestrel');
    expect(sessionIds(ws)).toEqual([id]);
  });

  it('prints the list for -p --resume without an id, and exits 0', async () => {
    const { ws, env } = await prepare([say('a')]);
    const empty = await runKeel(['-p', '--resume'], { cwd: ws.dir, env });
    expect(empty).toMatchObject({ code: 0, stdout: `No sessions for ${ws.dir} yet.\n` });
    await runKeel(['-p', 'some task'], { cwd: ws.dir, env });
    const list = await runKeel(['-p', '--resume'], { cwd: ws.dir, env });
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+LAST ACTIVITY\s+TURNS\s+COST\s+FIRST PROMPT$/);
    expect(list.stdout).toContain('some task');
  });

  it('--continue picks the newest session; --fork-session copies it into a new one', async () => {
    const { server, ws, env } = await prepare([say('one'), say('two'), say('three'), say('four')]);
    const a = JSON.parse((await runKeel(['-p', 'session A', '--output-format', 'json'], { cwd: ws.dir, env })).stdout).session_id;
    const b = JSON.parse((await runKeel(['-p', 'session B', '--output-format', 'json'], { cwd: ws.dir, env })).stdout).session_id;
    const { utimesSync } = await import('node:fs');
    utimesSync(path.join(sessionsDir(ws), `${a}.jsonl`), new Date(1e12), new Date(1e12));

    const cont = await runKeel(['-p', 'more', '--continue', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(JSON.parse(cont.stdout).session_id).toBe(b);
    expect(JSON.stringify(server.messageRequests()[2].body.messages[0])).toContain('session B');

    const before = readFileSync(path.join(sessionsDir(ws), `${a}.jsonl`), 'utf8');
    const fork = await runKeel(['-p', 'branch off', '--resume', a, '--fork-session', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(fork.code).toBe(0);
    const forkId = JSON.parse(fork.stdout).session_id;
    expect(forkId).not.toBe(a);
    expect(readFileSync(path.join(sessionsDir(ws), `${a}.jsonl`), 'utf8')).toBe(before);
    expect(jsonLines(path.join(sessionsDir(ws), `${forkId}.jsonl`))[0]).toMatchObject({ type: 'header', id: forkId, parent: a });
    expect(JSON.stringify(server.messageRequests()[3].body.messages[0])).toContain('session A');
    const listed = JSON.parse((await runKeel(['sessions', '--json'], { cwd: ws.dir, env })).stdout);
    expect(listed.find((s: { id: string }) => s.id === forkId)).toMatchObject({ parent_session_id: a, turns: 2 });
  });

  it('fails with one line for an unknown id', async () => {
    const { ws, env } = await prepare([]);
    const run = await runKeel(['-p', 'hi', '--resume', 'nope'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('keel: --resume: no session "nope" in this project (run keel sessions to list them)\n');
  });

  it('/cost on a resumed session counts what earlier runs spent; on a fork it says what it inherited', async () => {
    const { ws, env } = await prepare([say('priced answer', { usage: { input_tokens: 1_000_000, output_tokens: 0 } })]);
    // $3 per million input tokens: the first run costs exactly $3.00, in one call.
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ pricing: { 'claude-test': { input: 3, output: 15 } }, model: 'claude-test' }));
    const first = await runKeel(['-p', 'spend something', '--output-format', 'json'], { cwd: ws.dir, env });
    const id = JSON.parse(first.stdout).session_id as string;
    expect(JSON.parse(first.stdout).total_cost_usd).toBeCloseTo(3, 9);
    const listed = await runKeel(['sessions'], { cwd: ws.dir, env });
    expect(listed.stdout).toContain('$3.0000');

    const resumed = await runKeel(['-p', '/cost', '--resume', id], { cwd: ws.dir, env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('Total cost:    $3.00');
    expect(resumed.stdout).toContain('1,000,000 input, 0 output, 0 cache read, 0 cache write (1 call)');
    expect(resumed.stdout).toContain('Earlier runs:  $3.00 over 1 call before this session was resumed (included above)');

    const forked = await runKeel(['-p', '/cost', '--resume', id, '--fork-session'], { cwd: ws.dir, env });
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stdout).toContain('Total cost:    $3.00');
    expect(forked.stdout).toContain(`Inherited:     $3.00 over 1 call from session ${id} (forked from it; included above)`);
  });

  it('refuses an empty --resume id as a usage error', async () => {
    const { server, ws, env } = await prepare([say('never')]);
    const run = await runKeel(['-p', 'hi', '--resume', ''], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('keel: --resume: the session id is empty (run keel sessions to list them)\n');
    expect(server.messageRequests()).toHaveLength(0);
    expect(sessionIds(ws)).toEqual([]);
  });

  it('leaves no lock after a run; refuses in one line to resume a session another live keel holds', async () => {
    const { ws, env } = await prepare([say('one'), say('forked')]);
    const id = JSON.parse((await runKeel(['-p', 'first', '--output-format', 'json'], { cwd: ws.dir, env })).stdout).session_id;
    expect(readdirSync(sessionsDir(ws)).filter((n) => n.endsWith('.lock'))).toEqual([]);
    // This test process stands in for the other keel: it is alive, and not the child.
    const lock = path.join(sessionsDir(ws), `${id}.lock`);
    const owner = `${process.pid} other ${processStart(process.pid)}\n`;
    writeFileSync(lock, owner);
    const refused = await runKeel(['-p', 'second', '--resume', id], { cwd: ws.dir, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).not.toContain('failed in hook');
    expect(refused.stderr).toContain(`session ${id} is in use by another keel process (pid ${process.pid})`);
    const forked = await runKeel(['-p', 'second', '--resume', id, '--fork-session', '--output-format', 'json'], { cwd: ws.dir, env });
    expect(forked.code, forked.stderr).toBe(0);
    expect(JSON.parse(forked.stdout).session_id).not.toBe(id);
    expect(readFileSync(lock, 'utf8')).toBe(owner);
  });

  it('resumes a session whose lock names a live pid that is not keel (pid reuse)', async () => {
    const { ws, env } = await prepare([say('one'), say('two')]);
    const id = JSON.parse((await runKeel(['-p', 'first', '--output-format', 'json'], { cwd: ws.dir, env })).stdout).session_id;
    const lock = path.join(sessionsDir(ws), `${id}.lock`);
    // The pid is alive (this test runner), but it did not write the lock: its start time differs.
    writeFileSync(lock, `${process.pid} stale ${Number(processStart(process.pid)) - 1}\n`);
    const resumed = await runKeel(['-p', 'second', '--resume', id], { cwd: ws.dir, env });
    expect(resumed.stderr).toBe('');
    expect(resumed).toMatchObject({ code: 0, stdout: 'two\n' });
    expect(existsSync(lock)).toBe(false);
  });

  it('resumes a file with a corrupt middle line, warning on stderr with the line number', async () => {
    const { server, ws, env } = await prepare([say('one'), say('two'), say('three')]);
    const id = JSON.parse((await runKeel(['-p', 'first', '--output-format', 'json'], { cwd: ws.dir, env })).stdout).session_id;
    await runKeel(['-p', 'second', '--resume', id], { cwd: ws.dir, env });
    const file = path.join(sessionsDir(ws), `${id}.jsonl`);
    const lines = readFileSync(file, 'utf8').split('\n');
    const victim = lines.findIndex((l) => l.includes('"second"'));
    lines[victim] = lines[victim].slice(0, 25);
    writeFileSync(file, lines.join('\n'));
    const run = await runKeel(['-p', 'third', '--resume', id], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`keel: warn: ${file}: line ${victim + 1} is corrupt (not valid JSON); skipped`);
    const roles = (server.messageRequests()[2].body.messages as MessageParam[]).map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'assistant', 'user']);
  });

  it('takes sessions.fsync from agent.config.json and names a bad value', async () => {
    const { ws, env } = await prepare([say('ok')]);
    ws.write('agent.config.json', JSON.stringify({ sessions: { fsync: false } }));
    const ok = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(ok.code).toBe(0);
    expect(sessionIds(ws)).toHaveLength(1);
    ws.write('agent.config.json', JSON.stringify({ sessions: { fsync: 'yes' } }));
    const bad = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/agent\.config\.json.*sessions\.fsync/);
  });
});

// ---------------------------------------------------------------------------------------------------------

/** A tool that takes a while, so kills also land while a tool runs (between tool_use and its result). */
const SLOW_TOOL_CONFIG = `import { defineConfig, definePlugin, defineTool, z } from 'keel';
const slow = defineTool({
  name: 'slow',
  description: 'waits, then answers',
  permission: 'read',
  input: z.object({ ms: z.number(), text: z.string(), times: z.number().optional() }),
  execute: async ({ ms, text, times }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: text.repeat(times ?? 1) };
  },
});
export default defineConfig({
  plugins: [definePlugin(() => ({ name: 'slow-tool', kernel: '^1.0.0', apply: (kernel) => kernel.tools.register(slow) }))()],
});
`;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOOL_TURNS = 4;
const EVENT_DELAY_MS = 8;

function crashScript(rand: () => number, onRequest: (index: number) => void): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (let i = 0; i < TOOL_TURNS; i++) {
    const turn: ScriptedTurn = {
      content: [
        { type: 'text', text: `step ${i}: calling the slow tool now` },
        // Every other output is big enough for a side file.
        { type: 'tool_use', id: `toolu_${i}`, name: 'slow', input: { ms: 20 + Math.floor(rand() * 40), text: `out${i} `, times: i % 2 ? 5000 : 1 } },
      ],
      eventDelayMs: EVENT_DELAY_MS,
    };
    steps.push(() => (onRequest(i), turn));
  }
  steps.push(() => (onRequest(TOOL_TURNS), say('all steps finished', { eventDelayMs: EVENT_DELAY_MS })));
  return steps;
}

/** Independent of the store's own repair: every tool_use answered in the next message, no stray result. */
function assertPaired(messages: MessageParam[]): void {
  messages.forEach((message, i) => {
    const blocks = typeof message.content === 'string' ? [] : message.content;
    if (message.role === 'assistant') {
      const ids = blocks.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
      if (!ids.length) return;
      const next = messages[i + 1];
      expect(next?.role, `message ${i + 1} must answer ${ids.join(', ')}`).toBe('user');
      const answered = (typeof next!.content === 'string' ? [] : next!.content).flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
      expect(answered).toEqual(ids);
    } else if (message.role === 'user') {
      const results = blocks.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : []));
      if (!results.length) return;
      const prev = messages[i - 1];
      const asked = prev && typeof prev.content !== 'string' ? prev.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : [];
      expect(results.every((id) => asked.includes(id)), `stray tool_result in message ${i}`).toBe(true);
    }
  });
}

/** The messages a file's complete lines hold, side files resolved by hand. */
function writtenMessages(file: string): MessageParam[] {
  const text = readFileSync(file, 'utf8');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  const out: MessageParam[] = [];
  for (const line of complete.split('\n').filter(Boolean)) {
    const record = JSON.parse(line); // every complete line must parse: one record per write(2)
    if (record.type !== 'message') continue;
    for (const ref of record.refs ?? []) {
      record.message.content[ref.b].content = JSON.parse(readFileSync(path.join(file.slice(0, -6), ref.file), 'utf8'));
    }
    out.push(record.message);
  }
  return out;
}

/** The provider may turn string content into a text block and add cache breakpoints: compare without both. */
const normalize = (messages: MessageParam[]): unknown =>
  JSON.parse(JSON.stringify(messages), (key, v) => (key === 'cache_control' ? undefined : v)).map((m: MessageParam) =>
    typeof m.content === 'string' ? { ...m, content: [{ type: 'text', text: m.content }] } : m,
  );

const SEEDS = Array.from({ length: 50 }, (_, i) => i + 1);

describe('crash safety: kill -9 at a seeded point, then resume', () => {
  it.concurrent.each(SEEDS)('seed %i', async (seed) => {
    const rand = mulberry32(seed * 7919);
    const killTurn = Math.floor(rand() * (TOOL_TURNS + 1));
    const killDelay = Math.floor(rand() * 160);
    const tear = rand() < 0.3;
    const viaCli = seed % 10 === 0;

    let child: ReturnType<typeof spawnKeel> | undefined;
    const server = await startAnthropicServer(
      crashScript(rand, (index) => {
        if (index === killTurn) setTimeout(() => child?.kill('SIGKILL'), killDelay);
      }),
    );
    const ws = makeWorkspace({ git: true });
    try {
      ws.write('agent.config.ts', SLOW_TOOL_CONFIG);
      const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: ws.home };
      child = spawnKeel(['-p', 'run the slow steps', '--trust', '--permission-mode', 'auto'], { cwd: ws.dir, env });
      const run = await collect(child);
      expect(run.signal === 'SIGKILL' || run.code === 0, run.stderr).toBe(true);

      const [id] = readdirSync(sessionsDir(ws)).filter((n) => n.endsWith('.jsonl')).map((n) => n.slice(0, -6));
      const file = path.join(sessionsDir(ws), `${id}.jsonl`);
      const written = writtenMessages(file);
      expect(written.length).toBeGreaterThan(0);
      expect(written[0]).toEqual({ role: 'user', content: 'run the slow steps' });
      // A power cut can also tear the last write; simulate one on some seeds.
      if (tear) appendFileSync(file, '{"type":"message","at":1,"message":{"role":"assistant","content":[{"type":"text","text":"LEAKED');

      if (!viaCli) {
        const warnings: string[] = [];
        const loaded = await loadSession(file, { sideDir: file.slice(0, -6), warn: (m) => warnings.push(m) });
        expect(warnings).toEqual([]);
        expect(loaded.messages.slice(0, written.length)).toEqual(written);
        const extra = loaded.messages.slice(written.length);
        expect(extra.every((m) => JSON.stringify(m).includes('Interrupted'))).toBe(true);
        expect(JSON.stringify(loaded.messages)).not.toContain('LEAKED');
        assertPaired(loaded.messages);
        return;
      }

      const after = await startAnthropicServer([say('recovered')]);
      try {
        const resumed = await runKeel(['-p', 'after the crash', '--resume', id, '--trust', '--output-format', 'json'], {
          cwd: ws.dir,
          env: { ...env, ANTHROPIC_BASE_URL: after.url },
        });
        expect(resumed.code, resumed.stderr).toBe(0);
        expect(JSON.parse(resumed.stdout)).toMatchObject({ session_id: id, result: 'recovered' });
        const sent = after.messageRequests()[0].body.messages as MessageParam[];
        expect(normalize(sent.slice(0, written.length))).toEqual(normalize(written));
        expect(JSON.stringify(sent)).not.toContain('LEAKED');
        assertPaired(sent);
        const text = readFileSync(file, 'utf8');
        expect(text.endsWith('\n')).toBe(true);
        expect(text).not.toContain('LEAKED');
        assertPaired((await loadSession(file, { sideDir: file.slice(0, -6), warn: () => {} })).messages);
      } finally {
        await after.close();
      }
    } finally {
      child?.kill('SIGKILL');
      await server.close();
      ws.cleanup();
    }
  });
});
