/** Managed allowedMcpServers / deniedMcpServers matching (Claude Code's meaning). */
import { describe, expect, it } from 'vitest';
import type { ManagedPolicy, McpServerMatcher } from '../../../kernel/index.js';
import { managedBlock, managedServers } from '../../../plugins/mcp-bridge/managed.js';

const FILE = '/etc/keel/managed-settings.json';
const policy = (allowed?: McpServerMatcher[], denied: McpServerMatcher[] = []): ManagedPolicy => ({
  files: [FILE],
  allowedMcpServers: allowed ? [{ file: FILE, servers: allowed }] : [],
  deniedMcpServers: denied.length ? [{ file: FILE, servers: denied }] : [],
});
const stdio = { command: 'npx', args: ['@modelcontextprotocol/server-filesystem', '/srv'] };
const remote = { type: 'http' as const, url: 'https://mcp.corp.example/github' };

describe('managed MCP server lists', () => {
  it('lets every server start without a policy or without lists', () => {
    expect(managedBlock(undefined, 'files', stdio)).toBeUndefined();
    expect(managedBlock(policy(), 'files', stdio)).toBeUndefined();
  });

  it('an empty allow list allows none; a deny entry beats an allow entry', () => {
    expect(managedBlock(policy([]), 'files', stdio)).toContain('not in the managed allow list');
    expect(managedBlock(policy([{ serverName: 'files' }], [{ serverName: 'files' }]), 'files', stdio)).toContain('is denied by managed settings');
  });

  it('with serverCommand entries a stdio server must match a command line exactly, not just a name', () => {
    const list = [{ serverName: 'files' }, { serverCommand: ['npx', '@modelcontextprotocol/server-filesystem', '/srv'] }];
    expect(managedBlock(policy(list), 'anything', stdio)).toBeUndefined();
    expect(managedBlock(policy(list), 'files', { command: 'npx', args: ['evil-server'] })).toContain('not in the managed allow list');
    expect(managedBlock(policy(list), 'files', { ...stdio, args: [...stdio.args, '/'] })).toContain('not in the managed allow list');
  });

  it('with serverUrl entries a remote server must match a URL pattern (* wildcards, nothing else special)', () => {
    const list = [{ serverUrl: 'https://mcp.corp.example/*' }];
    expect(managedBlock(policy(list), 'gh', remote)).toBeUndefined();
    expect(managedBlock(policy(list), 'gh', { type: 'http', url: 'https://mcp.corp.example.evil.io/x' })).toContain('not in the managed allow list');
    expect(managedBlock(policy([{ serverUrl: 'https://a.b/x' }]), 'gh', { type: 'http', url: 'https://aXb/x' })).toContain('not in the managed allow list');
  });

  it('denies by name, command or URL, and splits a server list into the allowed and the blocked', () => {
    const p = policy(undefined, [{ serverUrl: 'https://*.corp.example/*' }, { serverCommand: ['npx', 'evil-server'] }]);
    const { servers, blocked } = managedServers(p, { gh: remote, files: stdio, evil: { command: 'npx', args: ['evil-server'] } });
    expect(Object.keys(servers)).toEqual(['files']);
    expect(blocked).toEqual([
      `MCP server "gh" is denied by managed settings (deniedMcpServers in ${FILE}); not started`,
      `MCP server "evil" is denied by managed settings (deniedMcpServers in ${FILE}); not started`,
    ]);
  });
});
