import { readFileSync, statSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expandServer, expandString, serverLayers, transportOf, writeServer } from '../../../plugins/mcp-bridge/settings.js';
import { toToolResult } from '../../../plugins/mcp-bridge/content.js';
import { promptArguments } from '../../../plugins/mcp-bridge/bridge.js';
import { mcpName } from '../../../plugins/mcp-bridge/tools.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace({ git: true });
});
afterEach(() => ws.cleanup());

const ctx = (extra: object = {}) => ({ cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home, ...extra });

describe('server settings', () => {
  it('expands ${VAR} and ${VAR:-default}, and names the field of an unset variable', () => {
    const env = { TOKEN: 'abc', EMPTY: '' };
    expect(expandString('Bearer ${TOKEN}', env, 'x')).toBe('Bearer abc');
    expect(expandString('${MISSING:-fallback}/${EMPTY:-e}', env, 'x')).toBe('fallback/e');
    expect(() => expandString('${MISSING}', env, 'mcpServers.gh.headers.Authorization')).toThrow(
      'mcpServers.gh.headers.Authorization: ${MISSING} is not set (give it a value or write ${MISSING:-default})',
    );
    expect(expandServer('s', { command: '${BIN:-node}', args: ['--root', '${TOKEN}'], env: { K: '${TOKEN}' }, url: undefined }, env)).toMatchObject({
      command: 'node',
      args: ['--root', 'abc'],
      env: { K: 'abc' },
    });
    expect(transportOf({ command: 'x' })).toBe('stdio');
    expect(transportOf({ url: 'http://h' })).toBe('http');
    expect(transportOf({ type: 'sse', url: 'http://h' })).toBe('sse');
  });

  it('reads .mcp.json, $KEEL_HOME/mcp.json and --mcp-config (inline and file) as layers of their kinds', () => {
    ws.write('.mcp.json', JSON.stringify({ mcpServers: { p: { command: 'p' } } }));
    ws.write('extra.json', JSON.stringify({ mcpServers: { f: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }));
    writeServer(`${ws.home}/mcp.json`, 'u', { command: 'u' });
    const layers = serverLayers(ctx({ trusted: true, options: { mcpConfig: ['{"mcpServers": {"i": {"command": "i"}}}', 'extra.json'] } }));
    expect(layers.map((l) => [l.kind, l.source, Object.keys(l.values.mcpServers as object)])).toEqual([
      ['user', `${ws.home}/mcp.json`, ['u']],
      ['project', ws.path('.mcp.json'), ['p']],
      ['flags', '--mcp-config', ['i']],
      ['flags', ws.path('extra.json'), ['f']],
    ]);
    // Untrusted: the project file is named but not read.
    ws.write('.mcp.json', '{ broken');
    expect(serverLayers(ctx({ trusted: false }))[1]).toMatchObject({ kind: 'project', values: { mcpServers: {} } });
    expect(() => serverLayers(ctx({ trusted: true }))).toThrow(`${ws.path('.mcp.json')}: not valid JSON`);
    expect(() => serverLayers(ctx({ trusted: false, options: { mcpConfig: ['{"mcpServers": []}'] } }))).toThrow('--mcp-config: mcpServers: expected an object of servers by name');
  });

  it('adds and removes servers keeping the rest of the file, 0600', () => {
    const file = ws.write('.mcp.json', JSON.stringify({ other: 1, mcpServers: { a: { command: 'a' } } }));
    expect(writeServer(file, 'b', { url: 'http://x' })).toBe(false);
    expect(writeServer(file, 'a', undefined)).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ other: 1, mcpServers: { b: { url: 'http://x' } } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    ws.write('.mcp.json', 'nope');
    expect(() => writeServer(file, 'c', { command: 'c' })).toThrow(`${file}: not valid JSON`);
  });
});

describe('results, names and prompt arguments', () => {
  it('cuts a result at the per-call cap and says so', () => {
    const result = toToolResult({ content: [{ type: 'text', text: 'a'.repeat(50) }, { type: 'text', text: 'b'.repeat(50) }] }, 60);
    expect(result.content).toEqual([
      { type: 'text', text: 'a'.repeat(50) },
      { type: 'text', text: 'b'.repeat(10) },
      { type: 'text', text: '[The MCP result was 100 bytes; it was cut at the per-call cap of 60 bytes.]' },
    ]);
    expect(result.display).toEqual({ mcpBytes: 100 });
    expect(toToolResult({ content: [], structuredContent: { n: 1 } }, 100).content).toBe('{\n  "n": 1\n}');
    expect(toToolResult({ content: [] }, 100).content).toBe('(no output)');
  });

  it('names tools mcp__server__tool with only the characters the API accepts, at most 64', () => {
    expect(mcpName('git hub', 'create.issue')).toBe('mcp__git_hub__create_issue');
    expect(mcpName('s', 'x'.repeat(100))).toHaveLength(64);
  });

  it('reads prompt arguments by position or as key=value', () => {
    expect(promptArguments('Paris France and more', ['city', 'state'])).toEqual({ city: 'Paris', state: 'France and more' });
    expect(promptArguments('state="New York" city=Albany', ['city', 'state'])).toEqual({ state: 'New York', city: 'Albany' });
    expect(promptArguments('', ['city'])).toEqual({});
  });
});
