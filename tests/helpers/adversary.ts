/**
 * The adversarial corpus's world: a hostile project, a fake HOME and KEEL_HOME, canary files outside the
 * workspace, and a scripted model that makes the attacker's tool calls against the built CLI. After a run,
 * `verdict()` says what changed on disk, which secrets reached a request, and what each call got back.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { callTool, callTools, say, startAnthropicServer, type ScriptStep, type ScriptedServer } from './anthropic-server.js';
import { runKeel, type KeelRun } from './cli.js';

/** Secret strings planted outside the project: none may ever appear in a request to the model. */
/**
 * What Keel itself keeps under $KEEL_HOME on every run: session files, the checkpoints /rewind uses, the records of
 * running tool processes and sandboxed commands, and the cache of transformed config modules (`cache/transpiled`:
 * an entry never runs unless signed with the user's key, tests/e2e/config-speed.test.ts).
 */
const KEEL_BOOKKEEPING = new Set(['sessions', 'checkpoints', 'processes', 'sandbox-runs', 'cache']);

export const SECRETS = {
  sshKey: 'CANARY-SSH-PRIVATE-KEY-8f1d',
  apiKey: 'sk-ant-CANARY-KEEL-AUTH-77c3',
  outside: 'CANARY-OUTSIDE-FILE-3a9e',
  env: 'CANARY-DOTENV-SECRET-51b0',
} as const;

export interface Hostile {
  /** The project (a git repository with `.git/hooks` and `.git/config`). */
  dir: string;
  /** The fake HOME (shell profiles, `~/.ssh`). */
  home: string;
  /** The isolated KEEL_HOME (auth.json with a canary key). */
  keelHome: string;
  /** A folder outside the project with a canary file. */
  outside: string;
  /** A marker file that proves code ran: every attack that means to run code writes here. */
  pwned: string;
  server: ScriptedServer;
  env: Record<string, string>;
  write(relative: string, content: string): string;
  path(relative: string): string;
  /** Takes the world as it is now as the baseline for `verdict().changed` (after planting files by hand). */
  settle(): void;
  /** Runs the built keel in the project with the fake HOME and KEEL_HOME. */
  run(args: string[], opts?: { input?: string; env?: Record<string, string>; cwd?: string; timeoutMs?: number }): Promise<KeelRun>;
  /** What the attack achieved; call after `run`. */
  verdict(): Verdict;
}

export interface Verdict {
  /** Files created, changed or removed outside the project, and protected files inside it, since the start. */
  changed: string[];
  /** True when the `pwned` marker exists. */
  ran: boolean;
  /** Names of SECRETS that appeared in any request body. */
  leaked: string[];
  /** Every tool_result the model received, by tool_use_id. */
  results: Record<string, { content: unknown; is_error?: boolean }>;
}

type Snapshot = Map<string, string>;

/** Files larger than this are compared by size and modification time, not read. */
const HASH_LIMIT = 64 * 1024 * 1024;

/** Files outside the project tree to watch, plus the project's protected places. */
function snapshot(roots: string[]): Snapshot {
  const out: Snapshot = new Map();
  const visit = (p: string, depth: number) => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (st.isSymbolicLink()) out.set(p, `link:${readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(p, `dir:${st.mode & 0o7777}`);
      if (depth > 12) return;
      for (const name of readdirSync(p)) visit(path.join(p, name), depth + 1);
    } else if (!st.isFile()) out.set(p, `special:${st.mode}:${st.ino}`);
    // A FIFO would block the read; a huge (sparse) file planted by a test is compared by size and time.
    else if (st.size > HASH_LIMIT) out.set(p, `file:${st.mode & 0o7777}:${st.ino}:${st.size}:${st.mtimeMs}`);
    else out.set(p, `file:${st.mode & 0o7777}:${st.ino}:${createHash('sha1').update(readFileSync(p)).digest('hex')}`);
  };
  for (const root of roots) visit(root, 0);
  return out;
}

function diff(before: Snapshot, after: Snapshot): string[] {
  const changed: string[] = [];
  for (const [p, v] of before) if (after.get(p) !== v) changed.push(p);
  for (const p of after.keys()) if (!before.has(p)) changed.push(p);
  return changed.sort();
}

/** Names of protected project files that must never appear or change unasked. */
const PROJECT_WATCH = ['.git', '.keel', 'agent.config.ts', 'agent.config.mjs', 'agent.config.js', 'agent.config.json', '.mcp.json', '.claude', 'AGENTS.md', 'CLAUDE.md', '.config'];

/** Call at module level; the returned function builds a hostile world for one test. */
export function useHostile(): (script?: ScriptStep[]) => Promise<Hostile> {
  const live: Array<{ base: string; server: ScriptedServer }> = [];
  afterEach(async () => {
    for (const { base, server } of live.splice(0)) {
      await server.close();
      rmSync(base, { recursive: true, force: true });
    }
  });
  return async (script = []) => {
    const base = mkdtempSync(path.join(tmpdir(), 'keel-adv-'));
    const dir = path.join(base, 'project');
    const home = path.join(base, 'home');
    const keelHome = path.join(base, 'keel-home');
    const outside = path.join(base, 'outside');
    for (const d of [dir, path.join(dir, '.git', 'hooks'), path.join(home, '.ssh'), keelHome, outside]) mkdirSync(d, { recursive: true });
    writeFileSync(path.join(dir, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n');
    writeFileSync(path.join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(path.join(dir, 'README.md'), '# victim project\n');
    writeFileSync(path.join(dir, '.env'), `TOKEN=${SECRETS.env}\n`);
    writeFileSync(path.join(home, '.bashrc'), '# bashrc\n');
    writeFileSync(path.join(home, '.profile'), '# profile\n');
    writeFileSync(path.join(home, '.ssh', 'id_rsa'), `-----BEGIN KEY-----\n${SECRETS.sshKey}\n`, { mode: 0o600 });
    writeFileSync(path.join(keelHome, 'auth.json'), JSON.stringify({ apiKey: SECRETS.apiKey }), { mode: 0o600 });
    writeFileSync(path.join(outside, 'secret.txt'), `${SECRETS.outside}\n`);
    const server = await startAnthropicServer(script);
    live.push({ base, server });
    const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: keelHome, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config') };
    const pwned = path.join(outside, 'PWNED');
    const watched = () => [home, outside, ...PROJECT_WATCH.map((n) => path.join(dir, n)), ...readdirSync(keelHome).filter((n) => !KEEL_BOOKKEEPING.has(n)).map((n) => path.join(keelHome, n))];
    let before = snapshot(watched());
    const self: Hostile = {
      dir,
      home,
      keelHome,
      outside,
      pwned,
      server,
      env,
      write(relative, content) {
        const file = path.join(dir, relative);
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, content);
        before = snapshot(watched());
        return file;
      },
      path: (relative) => path.join(dir, relative),
      settle() {
        before = snapshot(watched());
      },
      run: (args, opts = {}) => runKeel(args, { cwd: opts.cwd ?? dir, env: { ...env, ...opts.env }, input: opts.input, timeoutMs: opts.timeoutMs }),
      verdict() {
        const bodies = server.messageRequests().map((r) => JSON.stringify(r.body));
        const results: Verdict['results'] = {};
        for (const r of server.messageRequests()) {
          for (const m of r.body.messages ?? []) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') results[b.tool_use_id] = b;
        }
        return {
          changed: diff(before, snapshot(watched())),
          ran: existsSync(pwned),
          leaked: Object.entries(SECRETS).filter(([, s]) => bodies.some((b) => b.includes(s))).map(([k]) => k),
          results,
        };
      },
    };
    return self;
  };
}

/** The text of a tool_result's content. */
export function resultText(result: { content: unknown } | undefined): string {
  if (!result) return '';
  if (typeof result.content === 'string') return result.content;
  return JSON.stringify(result.content);
}

export { callTool, callTools, say };
