import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type ConfigLayer, type ToolDefinition, type Turn } from '../../../kernel/index.js';
import { mergeLayers } from '../../../cli/config.js';
import { parseRule, shellPatternMatches, toolMatches, urlPatternMatches } from '../../../plugins/permissions/rules.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { harness, rules } from './setup.js';

const mcpTool = (name: string) =>
  defineTool({ name, description: name, permission: 'network', input: z.object({}).passthrough(), execute: async () => ({ content: 'ok' }) });

let ws: Workspace;
afterEach(() => ws?.cleanup());
const inWs = () => {
  ws = makeWorkspace({ git: true });
  return { cwd: ws.dir, projectRoot: ws.dir };
};

describe('rule parsing', () => {
  it('reads tool names and specifiers', () => {
    expect(parseRule('allow', 'bash(npm run *)', 'x')).toMatchObject({ tool: 'bash', specifier: 'npm run *' });
    expect(parseRule('deny', 'mcp__github', 'x')).toMatchObject({ tool: 'mcp__github', specifier: undefined });
    expect(parseRule('ask', 'web_fetch(domain:example.com)', 'x')).toMatchObject({ tool: 'web_fetch', specifier: 'domain:example.com' });
  });

  it('rejects a malformed rule with a one-line error naming it and its place', () => {
    expect(() => parseRule('allow', 'bash(npm test', 'agent.config.ts: permissions.allow[0]')).toThrow(
      /^agent\.config\.ts: permissions\.allow\[0\]: invalid permission rule "bash\(npm test"/,
    );
    expect(() => parseRule('deny', 'bash()', 'here')).toThrow('the specifier in () is empty');
  });

  it('fails the plugin at start-up on a bad rule in config', async () => {
    await expect(harness({ config: rules(['read file']) })).rejects.toThrow(/permissions\.allow\[0\]: invalid permission rule "read file"/);
  });

  it('matches MCP names', () => {
    const r = (t: string) => parseRule('deny', t, 'x');
    expect(toolMatches(r('mcp__github'), 'mcp__github__create_issue')).toBe(true);
    expect(toolMatches(r('mcp__github'), 'mcp__githubx__a')).toBe(false);
    expect(toolMatches(r('mcp__github__*'), 'mcp__github__create_issue')).toBe(true);
    expect(toolMatches(r('mcp__github__create_issue'), 'mcp__github__create_issue')).toBe(true);
    expect(toolMatches(r('mcp__github__create_issue'), 'mcp__github__delete_repo')).toBe(false);
  });

  it('matches shell patterns word by word', () => {
    expect(shellPatternMatches('npm run *', 'npm run build')).toBe(true);
    expect(shellPatternMatches('npm run *', 'npm run')).toBe(true);
    expect(shellPatternMatches('npm run *', 'npm runx')).toBe(false);
    expect(shellPatternMatches('npm test', 'npm test --watch')).toBe(false);
    expect(shellPatternMatches('git diff:*', 'git diff HEAD')).toBe(true);
    expect(shellPatternMatches('git diff:*', 'git difftool')).toBe(false);
  });

  it('matches domains and subdomains only', () => {
    expect(urlPatternMatches('domain:example.com', 'https://example.com/a')).toBe(true);
    expect(urlPatternMatches('domain:example.com', 'https://docs.example.com/a')).toBe(true);
    expect(urlPatternMatches('domain:example.com', 'https://example.com.evil.net/')).toBe(false);
    expect(urlPatternMatches('domain:example.com', 'https://evilexample.com/')).toBe(false);
    expect(urlPatternMatches('domain:example.com', 'not a url')).toBe(false);
  });
});

describe('rule precedence', () => {
  it('deny beats ask and allow; ask beats allow', async () => {
    const h = await harness({ config: rules(['bash(npm *)'], ['bash(npm publish)'], ['bash(npm run nuke)']), session: inWs() });
    expect((await h.decide('bash', { command: 'npm install' }))?.behavior).toBe('allow');
    expect((await h.decide('bash', { command: 'npm publish' }))?.behavior).toBe('ask');
    expect(await h.decide('bash', { command: 'npm run nuke' })).toEqual({ behavior: 'deny', reason: expect.stringContaining('bash(npm run nuke)') });
  });

  it('a deny in any layer beats an allow in a higher layer', async () => {
    const layers: ConfigLayer[] = [
      { kind: 'user', source: '/home/u/.keel/agent.config.ts', values: { permissions: { deny: ['bash(curl *)', 'write_file(secrets/**)'] } } },
      { kind: 'project', source: '/p/agent.config.ts', values: { permissions: { allow: ['bash(curl *)', 'write_file'] } } },
      { kind: 'flags', source: 'flags', values: { permissionMode: 'auto' } },
    ];
    const merged = mergeLayers(layers, { cwd: '/p', projectRoot: '/p', keelHome: '' });
    expect(merged.permissions).toEqual({ allow: ['bash(curl *)', 'write_file'], ask: [], deny: ['bash(curl *)', 'write_file(secrets/**)'] });
    const h = await harness({ config: { permissions: merged.permissions }, session: { ...inWs(), permissionMode: 'auto' } });
    expect((await h.decide('bash', { command: 'curl https://x' }))?.behavior).toBe('deny');
    expect((await h.decide('bash', { command: 'command curl https://x' }))?.behavior).toBe('deny');
    expect((await h.decide('write_file', { path: 'secrets/key.txt' }))?.behavior).toBe('deny');
    expect((await h.decide('write_file', { path: 'src/a.ts' }))?.behavior).toBe('allow');
  });

  it('with shell deny rules, a command whose name is computed is asked even in auto mode', async () => {
    const h = await harness({ config: rules([], [], ['bash(rm *)']), session: { ...inWs(), permissionMode: 'auto' } });
    expect((await h.decide('bash', { command: '$(printf rm) -rf build' }))?.behavior).toBe('ask');
    expect((await h.decide('bash', { command: 'make build' }))?.behavior).toBe('allow');
  });

  it('bare rules cover every call of a tool; ask rules beat the mode', async () => {
    const h = await harness({ config: rules(['write_file'], ['read_file(docs/**)']), session: inWs() });
    expect((await h.decide('write_file', { path: 'src/x.ts' }))?.behavior).toBe('allow');
    expect((await h.decide('read_file', { path: 'docs/a.md' }))?.behavior).toBe('ask');
    expect((await h.decide('read_file', { path: 'src/a.md' }))?.behavior).toBe('allow');
  });

  it('path rules: relative to the project, absolute, and under ~', async () => {
    const session = inWs();
    const h = await harness({ config: rules(['write_file(src/**)', `write_file(${ws.path('gen')}/*.txt)`]), session });
    expect((await h.decide('write_file', { path: 'src/deep/a.ts' }))?.behavior).toBe('allow');
    expect((await h.decide('write_file', { path: 'gen/a.txt' }))?.behavior).toBe('allow');
    expect((await h.decide('write_file', { path: 'gen/a.md' }))?.behavior).toBe('ask');
    expect((await h.decide('write_file', { path: 'README.md' }))?.behavior).toBe('ask');
    const home = await harness({ config: rules(['read_file(~/notes/*)']), session: { ...session, permissionMode: 'manual' } });
    expect((await home.decide('read_file', { path: '~/notes/today.md' }))?.behavior).toBe('allow');
    expect((await home.decide('read_file', { path: '~/other/today.md' }))?.behavior).toBe('ask');
  });

  it('web_fetch(domain:…) rules', async () => {
    const h = await harness({ config: rules(['web_fetch(domain:example.com)'], [], ['web_fetch(domain:evil.net)']), session: inWs() });
    expect((await h.decide('web_fetch', { url: 'https://docs.example.com/x' }))?.behavior).toBe('allow');
    expect((await h.decide('web_fetch', { url: 'https://evil.net/x' }))?.behavior).toBe('deny');
    expect((await h.decide('web_fetch', { url: 'https://other.org/x' }))?.behavior).toBe('ask');
  });

  it('MCP server rules', async () => {
    const h = await harness({
      config: rules(['mcp__docs'], [], ['mcp__github__delete_repo']),
      session: inWs(),
      extraTools: [mcpTool('mcp__docs__search'), mcpTool('mcp__github__delete_repo'), mcpTool('mcp__github__list')],
    });
    expect((await h.decide('mcp__docs__search', {}))?.behavior).toBe('allow');
    expect((await h.decide('mcp__github__delete_repo', {}))?.behavior).toBe('deny');
    expect((await h.decide('mcp__github__list', {}))?.behavior).toBe('ask');
  });
});

describe('selectTools', () => {
  it('a bare deny removes the tool from the request; a specifier deny does not', async () => {
    const h = await harness({
      config: rules([], [], ['bash', 'mcp__github', 'write_file(secrets/**)']),
      session: inWs(),
      extraTools: [mcpTool('mcp__github__list'), mcpTool('mcp__docs__search')],
    });
    const tools = await h.kernel.hooks.selectTools.promise(h.kernel.tools.list() as ToolDefinition[], h.turn as Turn);
    expect(tools.map((t) => t.name).sort()).toEqual(['mcp__docs__search', 'read_file', 'web_fetch', 'write_file']);
    expect((await h.decide('bash', { command: 'ls' }))?.behavior).toBe('deny');
  });
});
