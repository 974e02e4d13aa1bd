/**
 * Each ACP session gets a kernel of its own, built like `keel/sdk`'s in-process kernel: `createKernel` with the
 * configuration `keel acp` resolved, and the same plugins applied again. Its state (messages, todos, usage), its
 * MCP servers and its session data are its own, so one session's failure or cancel never touches another.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { McpServer } from '@agentclientprotocol/sdk';
import { createKernel, type Kernel, type McpServerConfig } from '../../kernel/index.js';
import { sessionTrust } from './trust.js';

export const CLIENT_SOURCE = 'the editor (ACP session/new)';

/** The folder a session's cwd belongs to: the configured project when inside it, else its nearest repository root. */
function projectRootOf(base: Kernel, cwd: string): string {
  const rel = path.relative(base.config.projectRoot, cwd);
  // `..name` is a folder inside the project; only `..` itself or `../…` leaves it.
  if (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel)) return base.config.projectRoot;
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return cwd;
  }
}

/** The editor's MCP servers in Keel's config shape. */
export function mcpServersOf(servers: McpServer[]): Record<string, McpServerConfig> {
  const out: Record<string, McpServerConfig> = {};
  for (const server of servers) {
    if ('type' in server && (server.type === 'http' || server.type === 'sse')) {
      out[server.name] = { type: server.type, url: server.url, headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])) };
    } else {
      const stdio = server as Extract<McpServer, { command: string }>;
      out[stdio.name] = { type: 'stdio', command: stdio.command, args: stdio.args, env: Object.fromEntries(stdio.env.map((e) => [e.name, e.value])) };
    }
  }
  return out;
}

export function sessionKernel(base: Kernel, cwd: string, servers: McpServer[]): Kernel {
  const mcpServers = mcpServersOf(servers);
  const sources = { ...base.config.sources };
  for (const name of Object.keys(mcpServers)) sources[`mcpServers.${name}`] = CLIENT_SOURCE;
  const projectRoot = projectRootOf(base, cwd);
  // A folder outside the launch folder's project has its own trust (its commands, skills and sub-agents run code).
  const trusted = sessionTrust(base, projectRoot);
  const config = { ...base.config, cwd, projectRoot, trusted, mcpServers: { ...base.config.mcpServers, ...mcpServers }, sources };
  const kernel = createKernel({ config });
  for (const plugin of base.plugins) kernel.use(plugin);
  return kernel.seal();
}
