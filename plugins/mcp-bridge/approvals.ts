/**
 * Project servers the user has been shown. A project server (from `.mcp.json`, front matter or the project's
 * `agent.config.ts`) runs a program the repository chose: the first time Keel sees it — or sees it changed —
 * it is listed before it starts. Kept in `$KEEL_HOME/mcp-approvals.json` (0600):
 * `{ "projects": { "/abs/root": { "name": "<sha256 of its settings>" } } }`.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { McpServerConfig, ResolvedConfig } from '../../kernel/index.js';

export const APPROVALS_FILE = 'mcp-approvals.json';

type Approvals = { projects: Record<string, Record<string, string>> };

export function fingerprint(server: McpServerConfig): string {
  const { command, args, env, cwd, url, headers, type } = server;
  return createHash('sha256').update(JSON.stringify({ type, command, args, env, cwd, url, headers })).digest('hex');
}

function read(file: string): Approvals {
  if (!existsSync(file)) return { projects: {} };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Approvals>;
    return { projects: typeof parsed.projects === 'object' && parsed.projects !== null ? parsed.projects : {} };
  } catch {
    // A damaged file only means servers are listed again.
    return { projects: {} };
  }
}

/** The servers of `servers` not yet shown for this project (new or changed), recorded as shown now. */
export function recordProjectServers(keelHome: string, projectRoot: string, servers: Record<string, McpServerConfig>): string[] {
  const file = path.join(keelHome, APPROVALS_FILE);
  const approvals = read(file);
  const known = approvals.projects[projectRoot] ?? {};
  const fresh = Object.entries(servers)
    .filter(([name, server]) => known[name] !== fingerprint(server))
    .map(([name]) => name);
  if (fresh.length === 0) return [];
  for (const name of fresh) known[name] = fingerprint(servers[name]!);
  approvals.projects[projectRoot] = known;
  mkdirSync(keelHome, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(approvals, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return fresh;
}

/** One line per server: what it runs or where it connects. */
export function describeServer(server: McpServerConfig): string {
  if (server.command !== undefined) return [server.command, ...(server.args ?? [])].join(' ');
  return `${server.type ?? 'http'} ${server.url}`;
}

const isInside = (child: string, parent: string) => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** Servers that came from the project (its `.mcp.json`, front matter or `agent.config.ts`), not from the user. */
export function projectServers(config: ResolvedConfig): Record<string, McpServerConfig> {
  const { projectRoot, keelHome, sources, mcpServers } = config;
  const out: Record<string, McpServerConfig> = {};
  for (const [name, server] of Object.entries(mcpServers)) {
    const source = sources[`mcpServers.${name}`];
    if (source && path.isAbsolute(source) && isInside(source, projectRoot) && !(keelHome && isInside(source, keelHome))) out[name] = server;
  }
  return out;
}

/** Records the project servers not shown before and returns the line that lists them, if any. */
export function announceProjectServers(config: ResolvedConfig): string | undefined {
  const fresh = recordProjectServers(config.keelHome, config.projectRoot, projectServers(config));
  if (fresh.length === 0) return undefined;
  const lines = fresh.map((name) => `${name} (${describeServer(config.mcpServers[name]!)}, from ${config.sources[`mcpServers.${name}`]})`);
  return `starting project MCP servers seen for the first time: ${lines.join('; ')}`;
}
