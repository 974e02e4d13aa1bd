import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createKernel, defaultConfig } from '../../../kernel/index.js';
import statusLine, { refusal } from '../../../plugins/status-line/index.js';
import { displayName, statusInput } from '../../../plugins/status-line/input.js';
import { sanitizeLine, StatusRunner } from '../../../plugins/status-line/runner.js';

const temps: string[] = [];
const runners: StatusRunner[] = [];
afterEach(() => {
  for (const r of runners.splice(0)) r.stop();
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function temp(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-status-'));
  temps.push(dir);
  return dir;
}

/** A runner whose shown lines and failures resolve awaited promises, in order. */
function runner(command: string, opts: { timeoutMs?: number; minIntervalMs?: number; json?: string } = {}) {
  const shown: string[] = [];
  const failures: string[] = [];
  let wake: (() => void) | null = null;
  const next = () => new Promise<void>((r) => (wake = r));
  const r = new StatusRunner({
    command,
    input: () => ({ cwd: os.tmpdir(), json: opts.json ?? '{"session_id":"s1"}' }),
    show: (line) => {
      shown.push(line);
      wake?.();
    },
    failed: (reason) => failures.push(reason),
    timeoutMs: opts.timeoutMs,
    minIntervalMs: opts.minIntervalMs,
  });
  runners.push(r);
  return { r, shown, failures, next };
}

describe('the status line runner', () => {
  it('passes the JSON on stdin and shows the first line of stdout, colours kept', async () => {
    const { r, shown, next } = runner(`node -e "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>console.log('\\x1b[31m'+JSON.parse(s).session_id+'\\x1b[0m\\nmore'))"`);
    const done = next();
    r.request();
    await done;
    expect(shown).toEqual(['\x1b[31ms1\x1b[0m']);
  });

  it('never runs two at once: requests during a run are served once, after it', async () => {
    const dir = temp();
    const log = path.join(dir, 'log');
    const { r, shown, next } = runner(`echo start >> ${log}; sleep 0.3; echo end >> ${log}; echo ok`, { minIntervalMs: 0 });
    let done = next();
    r.request();
    expect(r.running).toBe(true);
    r.request();
    r.request();
    await done;
    done = next();
    await done;
    expect(shown).toEqual(['ok', 'ok']);
    expect(readFileSync(log, 'utf8')).toBe('start\nend\nstart\nend\n');
  });

  it('waits out the interval between starts', async () => {
    const { r, shown, next } = runner('echo tick', { minIntervalMs: 10_000 });
    const done = next();
    r.request();
    await done;
    r.request();
    // The second request waits for its timer: nothing runs now.
    expect(r.running).toBe(false);
    expect(shown).toEqual(['tick']);
  });

  it('a command that fails, or outlives its timeout, shows nothing and says why', async () => {
    const failing = runner('echo partial; exit 2');
    let done = failing.next();
    failing.r.request();
    await done;
    expect(failing.shown).toEqual(['']);
    expect(failing.failures).toEqual(['it exited with code 2']);
    const slow = runner('echo early; sleep 30', { timeoutMs: 200 });
    done = slow.next();
    slow.r.request();
    await done;
    expect(slow.shown).toEqual(['']);
    expect(slow.failures).toEqual(['it took longer than 200 ms and was stopped']);
  });

  it('a command that floods stdout shows its first line', async () => {
    const { r, shown, next } = runner('echo first; head -c 20000000 /dev/zero | tr "\\0" x');
    const done = next();
    r.request();
    await done;
    expect(shown).toEqual(['first']);
  });

  it('a command that does not read its stdin still works', async () => {
    const { r, shown, next } = runner('echo fine', { json: 'x'.repeat(1 << 20) });
    const done = next();
    r.request();
    await done;
    expect(shown).toEqual(['fine']);
  });
});

describe('what the command is told and what is shown', () => {
  it('keeps colours and drops cursor moves, screen clears, titles and other control characters', () => {
    expect(sanitizeLine('\x1b[1;32mok\x1b[0m \x1b[2J\x1b[Hmoved\x1b]0;title\x07 bell\x07\ttab\r\nsecond')).toBe('\x1b[1;32mok\x1b[0m moved bell tab');
  });

  it("names models as Claude Code does, and fills Claude Code's fields", () => {
    expect(displayName('claude-sonnet-4-5-20250929')).toBe('Sonnet 4.5');
    expect(displayName('claude-opus-4-1')).toBe('Opus 4.1');
    expect(displayName('claude-haiku-5')).toBe('Haiku 5');
    expect(displayName('gpt-5')).toBe('gpt-5');
    const session = { id: 's', cwd: '/p/sub', projectRoot: '/p', model: 'claude-sonnet-5-5', permissionMode: 'ask', startedAt: 1000 } as never;
    const state = { cost: 0.25, contextTokens: 500, contextWindow: 1000 } as never;
    expect(statusInput(session, state, { linesAdded: 3, linesRemoved: 1, apiDurationMs: 40 }, 'learning', 3000)).toMatchObject({
      session_id: 's',
      cwd: '/p/sub',
      model: { id: 'claude-sonnet-5-5', display_name: 'Sonnet 5.5' },
      workspace: { current_dir: '/p/sub', project_dir: '/p' },
      output_style: { name: 'learning' },
      permission_mode: 'ask',
      cost: { total_cost_usd: 0.25, total_duration_ms: 2000, total_api_duration_ms: 40, total_lines_added: 3, total_lines_removed: 1 },
      context_window: { context_window_size: 1000, used_tokens: 500, used_percentage: 50 },
    });
  });

  it("refuses a project's statusLine in an untrusted project, never the user's", () => {
    const config = (trusted: boolean, source: string) => defaultConfig({ cwd: '/p', projectRoot: '/p', trusted, sources: { statusLine: source } });
    expect(refusal(createKernel({ config: config(false, '/p/.claude/settings.json') }))).toMatch(/statusLine \(from \/p\/\.claude\/settings\.json\) does not run: the project is not trusted/);
    expect(refusal(createKernel({ config: config(false, '/home/u/.claude/settings.json') }))).toBeNull();
    expect(refusal(createKernel({ config: config(true, '/p/.claude/settings.json') }))).toBeNull();
  });

  it('validates the setting: a wrong type names the field', () => {
    const plugin = statusLine();
    const schema = plugin.config!.statusLine!;
    expect(schema.safeParse({ type: 'command', command: 'echo', padding: 1 }).success).toBe(true);
    const bad = schema.safeParse({ type: 'static', command: 'echo' });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues[0]?.path)).toBe('["type"]');
  });
});
