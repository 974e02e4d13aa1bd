/**
 * The mechanisms behind the settings surface: config search by name only, the protected registry's precedence of
 * whole-file entries over front-matter ones, the front matter definition both sides share, `keel describe`'s table.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.js';
import { CONFIG_FILES, findProjectConfig } from '../../cli/config.js';
import { coreProtectedEntries, frontMatterOf, ProtectedPaths } from '../../kernel/protected.js';
import { describeProtected } from '../../cli/describe-protected.js';
import { createKernel } from '../../kernel/kernel.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
afterEach(() => ws?.cleanup());

describe('findProjectConfig: names only, from cwd up to the project root', () => {
  it.each(CONFIG_FILES)('finds %s', (name) => {
    ws = makeWorkspace({ git: true });
    const file = ws.write(name, '');
    expect(findProjectConfig(ws.dir, ws.dir)).toBe(file);
  });

  it('the nearest folder wins, and the walk stops at the project root', () => {
    ws = makeWorkspace({ git: true });
    const root = ws.write('agent.config.ts', '');
    const nested = ws.write('a/b/agent.config.mjs', '');
    mkdirSync(ws.path('a/b/c'), { recursive: true });
    expect(findProjectConfig(ws.path('a/b/c'), ws.dir)).toBe(nested);
    expect(findProjectConfig(ws.path('a'), ws.dir)).toBe(root);
    // Above the root is never looked at.
    writeFileSync(path.join(path.dirname(ws.dir), 'agent.config.ts'), '');
    ws.write('sub/.git/HEAD', '');
    expect(findProjectConfig(ws.path('sub'), ws.path('sub'))).toBeUndefined();
  });

  it('ignores meta-configs, rc files, package.json keys and folders named like a config', () => {
    ws = makeWorkspace({ git: true });
    ws.write('.config/config.ts', '');
    ws.write('.keelrc', '{}');
    ws.write('keel.config.js', '');
    ws.write('package.json', JSON.stringify({ keel: { permissionMode: 'auto' } }));
    mkdirSync(ws.path('agent.config.ts'));
    expect(findProjectConfig(ws.dir, ws.dir)).toBeUndefined();
  });

  it('a symlink named agent.config.* counts (it is loaded only once trusted)', () => {
    ws = makeWorkspace({ git: true });
    const target = ws.write('real.mjs', '');
    symlinkSync(target, ws.path('agent.config.mjs'));
    expect(findProjectConfig(ws.dir, ws.dir)).toBe(ws.path('agent.config.mjs'));
  });

  it('--config must name a file', () => {
    ws = makeWorkspace();
    mkdirSync(ws.path('dir'));
    expect(() => findProjectConfig(ws.dir, ws.dir, 'dir')).toThrow(`--config: no such file: ${ws.path('dir')}`);
  });
});

describe('ProtectedPaths', () => {
  const surface = () => {
    const s = new ProtectedPaths();
    for (const e of coreProtectedEntries({ keelHome: '/k', home: '/h', configFiles: ['/p/keel.settings.mjs'] })) s.add(e);
    s.add({ segment: /^AGENTS\.md$/, why: 'instructions', frontMatter: true, owner: 'instructions' });
    return s;
  };

  it('a front-matter entry matches only when no whole-file entry does', () => {
    expect(surface().match('/p/AGENTS.md', 'write')?.entry.frontMatter).toBe(true);
    expect(surface().match('/p/.keel/AGENTS.md', 'write')?.entry.frontMatter).toBeUndefined();
    expect(surface().match('/h/.claude/AGENTS.md', 'write')?.reason).toMatch(/\.claude\//);
    expect(surface().match('/p/AGENTS.md', 'read')).toBeUndefined();
  });

  it('covers --config files, Claude Code files, credentials and dotenv files (but not dotenv templates)', () => {
    const s = surface();
    expect(s.match('/p/keel.settings.mjs', 'write')?.reason).toMatch(/a config file Keel loads/);
    expect(s.match('/p/.mcp.json', 'write')?.reason).toMatch(/MCP server list/);
    expect(s.match('/p/.claude/agents/x.md', 'write')).toBeDefined();
    expect(s.match('/h/.claude.json', 'write')).toBeDefined();
    expect(s.match('/h/.aws/credentials', 'read')?.reason).toMatch(/credentials file/);
    expect(s.match('/p/.env', 'read')?.reason).toMatch(/dotenv/);
    expect(s.match('/p/web/.env.production', 'read')).toBeDefined();
    expect(s.match('/p/.env.example', 'read')).toBeUndefined();
    expect(s.match('/p/agent.config.cts', 'write')).toBeDefined();
    expect(s.match('/p/agent.config.cts', 'read')).toBeUndefined();
  });

  it('matches a protected path itself and what is below it, never a sibling that shares its prefix', () => {
    const s = new ProtectedPaths();
    s.add({ path: '/h/.ssh', why: 'ssh', read: true });
    s.add({ path: '/k', why: 'home', read: true, except: [{ path: 'tool-outputs', access: 'read' }] });
    s.add({ path: '/', why: 'everything', frontMatter: true });
    expect(s.match('/h/.ssh', 'read')?.entry.why).toBe('ssh');
    expect(s.match('/h/.ssh/id_rsa', 'read')?.entry.why).toBe('ssh');
    expect(s.match('/h/.sshd/x', 'read')).toBeUndefined();
    expect(s.match('/h/.ssh2', 'read')).toBeUndefined();
    expect(s.match('/k/x', 'read')?.entry.why).toBe('home');
    expect(s.match('/k/tool-outputs/a.txt', 'read')).toBeUndefined();
    expect(s.match('/k/tool-outputs-old/a.txt', 'read')?.entry.why).toBe('home');
    expect(s.match('/k/tool-outputs/a.txt', 'write')?.entry.why).toBe('home');
    expect(s.match('/anything', 'write')?.entry.why).toBe('everything');
  });

  it('describes every entry with its access and owner', () => {
    const table = describeProtected(surface().list());
    expect(table.split('\n')[0]).toMatch(/^Protected paths/);
    expect(table).toMatch(/\/\^AGENTS\\\.md\$\/ \(any folder\)\s+write \(front matter\)\s+instructions\s+instructions/);
    expect(table).toMatch(/\/k\s+read\+write\s+kernel\s+in KEEL_HOME .*saved tool outputs/);
    // No whole-folder exception for saved outputs: each session reads only its own (savedOutputDir).
    expect(table).not.toMatch(/except tool-outputs/);
    expect(table).toMatch(/\/p\/keel\.settings\.mjs\s+write\s+kernel/);
  });
});

describe('frontMatterOf', () => {
  it.each([
    ['---\na: 1\n---\nbody', 'a: 1'],
    ['\uFEFF---\r\na: 1\r\n---\r\n', 'a: 1'],
    ['---\na: 1\n---', 'a: 1'],
    ['body\n---\na: 1\n---\n', undefined],
    ['---\na: 1\n', undefined],
    ['', undefined],
  ])('%j → %j', (text, expected) => expect(frontMatterOf(text)).toBe(expected));
});

describe('keel describe', () => {
  it('lists the protected paths with their owners after the hooks', async () => {
    ws = makeWorkspace({ git: true });
    let out = '';
    const io = { stdout: { write: (s: string) => (out += s) }, stderr: { write: () => true }, stdin: process.stdin } as never;
    const cwd = process.cwd();
    process.chdir(ws.dir);
    try {
      expect(await main(['describe'], io, { KEEL_HOME: ws.home, PATH: process.env.PATH })).toBe(0);
    } finally {
      process.chdir(cwd);
    }
    expect(out).toMatch(/Protected paths/);
    expect(out).toMatch(/\/\^\(AGENTS\|CLAUDE\)\\\.md\$\/ \(any folder\)\s+write \(front matter\)\s+instructions/);
    expect(out).toContain(ws.home);
  });

  it('a kernel made without a CLI still has the core entries', () => {
    expect(createKernel().protected.list().some((e) => e.owner === 'kernel')).toBe(true);
  });
});
