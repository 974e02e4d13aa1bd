/**
 * Managed settings' `allowedMcpServers` / `deniedMcpServers` (Claude Code's meaning): a denied server never
 * starts; with an allow list, only a server it matches does. A list holding `serverCommand` entries admits a
 * stdio server by its exact command line only, one holding `serverUrl` entries a remote server by its URL only,
 * so a project cannot borrow an allowed name for another program.
 */
import type { ManagedPolicy, McpServerConfig, McpServerMatcher } from '../../kernel/index.js';

function commandOf(server: McpServerConfig): string[] | undefined {
  return server.command !== undefined ? [server.command, ...(server.args ?? [])] : undefined;
}

function urlMatches(pattern: string, url: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(url);
}

function matchesEntry(entry: McpServerMatcher, name: string, server: McpServerConfig): boolean {
  if (entry.serverName !== undefined) return entry.serverName === name;
  const command = commandOf(server);
  if (entry.serverCommand !== undefined) return command !== undefined && command.length === entry.serverCommand.length && command.every((word, i) => word === entry.serverCommand![i]);
  if (entry.serverUrl !== undefined) return server.url !== undefined && urlMatches(entry.serverUrl, server.url);
  return false;
}

function allowedBy(list: McpServerMatcher[], name: string, server: McpServerConfig): boolean {
  const remote = server.url !== undefined && server.command === undefined;
  const byCommand = list.some((e) => e.serverCommand !== undefined);
  const byUrl = list.some((e) => e.serverUrl !== undefined);
  if (!remote && byCommand) return list.some((e) => e.serverCommand !== undefined && matchesEntry(e, name, server));
  if (remote && byUrl) return list.some((e) => e.serverUrl !== undefined && matchesEntry(e, name, server));
  return list.some((e) => e.serverName !== undefined && matchesEntry(e, name, server));
}

/** Why managed settings keep `name` from starting, or undefined when it may start. */
export function managedBlock(policy: ManagedPolicy | undefined, name: string, server: McpServerConfig): string | undefined {
  if (!policy) return undefined;
  const denied = policy.deniedMcpServers.find((d) => d.servers.some((e) => matchesEntry(e, name, server)));
  if (denied) return `MCP server "${name}" is denied by managed settings (deniedMcpServers in ${denied.file}); not started`;
  const notAllowed = policy.allowedMcpServers.find((a) => !allowedBy(a.servers, name, server));
  if (notAllowed) return `MCP server "${name}" is not in the managed allow list (allowedMcpServers in ${notAllowed.file}); not started`;
  return undefined;
}

/** The servers that may start, and a line for each one that may not. */
export function managedServers(policy: ManagedPolicy | undefined, servers: Record<string, McpServerConfig>): { servers: Record<string, McpServerConfig>; blocked: string[] } {
  if (!policy) return { servers, blocked: [] };
  const allowed: Record<string, McpServerConfig> = {};
  const blocked: string[] = [];
  for (const [name, server] of Object.entries(servers)) {
    const why = managedBlock(policy, name, server);
    if (why) blocked.push(why);
    else allowed[name] = server;
  }
  return { servers: allowed, blocked };
}
