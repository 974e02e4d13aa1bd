/**
 * Where MCP servers are configured besides `agent.config.ts`: the project's `.mcp.json`, the user's
 * `$KEEL_HOME/mcp.json` (both in Claude Code's format) and `--mcp-config <file|json>`. Each becomes a config
 * layer; the kernel validates and merges them with the rest.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KeelError, type ConfigLayer, type McpServerConfig } from '../../kernel/index.js';

export const PROJECT_FILE = '.mcp.json';
export const USER_FILE = 'mcp.json';

export const projectFile = (projectRoot: string) => path.join(projectRoot, PROJECT_FILE);
export const userFile = (keelHome: string) => path.join(keelHome, USER_FILE);

/** `{"mcpServers": {…}}` from a file, or an empty object when it does not exist. */
export function readServersFile(file: string): Record<string, unknown> {
  // A folder of that name (the sandbox's placeholder, left by a Keel killed mid-command) holds no servers.
  if (!existsSync(file) || !statSync(file).isFile()) return {};
  return parseServers(readFileSync(file, 'utf8'), file);
}

function parseServers(text: string, source: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new KeelError(`${source}: not valid JSON (${(err as Error).message})`, { code: 'config', exitCode: 2 });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new KeelError(`${source}: expected an object {"mcpServers": {…}}`, { code: 'config', exitCode: 2 });
  }
  const servers = (parsed as { mcpServers?: unknown }).mcpServers;
  if (servers === undefined) return {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new KeelError(`${source}: mcpServers: expected an object of servers by name`, { code: 'config', exitCode: 2 });
  }
  return servers as Record<string, unknown>;
}

/** Claude Code writes `"type": "stdio"` and omits it alike; both mean the same here. */
function layer(kind: ConfigLayer['kind'], source: string, servers: Record<string, unknown>, label?: string): ConfigLayer {
  return { kind, source, values: { mcpServers: servers }, labels: label ? { mcpServers: `${label}: mcpServers` } : undefined };
}

/** The layers this plugin contributes, lowest precedence first. */
export function serverLayers(ctx: { cwd: string; projectRoot: string; keelHome: string; options?: { mcpConfig?: string[]; strictMcpConfig?: boolean }; trusted?: boolean }): ConfigLayer[] {
  const layers: ConfigLayer[] = [];
  const strict = ctx.options?.strictMcpConfig === true;
  const user = userFile(ctx.keelHome);
  if (!strict && existsSync(user)) layers.push(layer('user', user, readServersFile(user)));
  const project = projectFile(ctx.projectRoot);
  // An untrusted project's file is named (in the warning) but not even parsed.
  if (!strict && existsSync(project)) layers.push(layer('project', project, ctx.trusted === false ? {} : readServersFile(project)));
  const fromFlags: Record<string, unknown> = {};
  for (const value of ctx.options?.mcpConfig ?? []) {
    const inline = value.trimStart().startsWith('{');
    if (inline) {
      const servers = parseServers(value, '--mcp-config');
      Object.assign(fromFlags, servers);
      layers.push(layer('flags', '--mcp-config', servers, '--mcp-config'));
      continue;
    }
    const file = path.resolve(ctx.cwd, value);
    if (!existsSync(file)) throw new KeelError(`--mcp-config: no such file: ${file}`, { code: 'config', exitCode: 2 });
    const servers = parseServers(readFileSync(file, 'utf8'), `--mcp-config ${file}`);
    Object.assign(fromFlags, servers);
    layers.push(layer('flags', file, servers, `--mcp-config ${file}`));
  }
  // `--strict-mcp-config`: the servers of --mcp-config are the only ones, whatever a config file adds.
  if (strict) layers.push({ kind: 'flags', source: '--strict-mcp-config', values: { strictMcpServers: fromFlags }, labels: { strictMcpServers: '--strict-mcp-config' } });
  return layers;
}

/** Adds or replaces one server in a file of this format, keeping its other keys. Returns the file. */
export function writeServer(file: string, name: string, server: McpServerConfig | undefined): boolean {
  let whole: Record<string, unknown> = {};
  if (existsSync(file)) {
    const text = readFileSync(file, 'utf8');
    try {
      whole = JSON.parse(text) as Record<string, unknown>;
    } catch (err) {
      throw new KeelError(`${file}: not valid JSON (${(err as Error).message}); fix it before changing servers`, { code: 'config', exitCode: 2 });
    }
  }
  const servers = { ...((whole.mcpServers as Record<string, unknown> | undefined) ?? {}) };
  const existed = name in servers;
  if (server) servers[name] = server;
  else delete servers[name];
  whole.mcpServers = servers;
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(whole, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return existed;
}

/**
 * `${VAR}` and `${VAR:-default}` in a string, from `env`. A variable that is unset and has no default is an
 * error naming the field, so a server never starts with half its settings.
 */
export function expandString(value: string, env: NodeJS.ProcessEnv, where: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_all, name: string, fallback: string | undefined) => {
    const found = env[name];
    if (found !== undefined && found !== '') return found;
    if (fallback !== undefined) return fallback;
    throw new KeelError(`${where}: \${${name}} is not set (give it a value or write \${${name}:-default})`, { code: 'config' });
  });
}

/** The server's settings with every string expanded. */
export function expandServer(name: string, server: McpServerConfig, env: NodeJS.ProcessEnv): McpServerConfig {
  const at = (field: string) => `mcpServers.${name}.${field}`;
  const record = (values: Record<string, string> | undefined, field: string) =>
    values && Object.fromEntries(Object.entries(values).map(([k, v]) => [k, expandString(v, env, at(`${field}.${k}`))]));
  return {
    ...server,
    command: server.command === undefined ? undefined : expandString(server.command, env, at('command')),
    args: server.args?.map((arg, i) => expandString(arg, env, at(`args.${i}`))),
    env: record(server.env, 'env'),
    cwd: server.cwd === undefined ? undefined : expandString(server.cwd, env, at('cwd')),
    url: server.url === undefined ? undefined : expandString(server.url, env, at('url')),
    headers: record(server.headers, 'headers'),
  };
}

export type TransportKind = 'stdio' | 'http' | 'sse';

export function transportOf(server: McpServerConfig): TransportKind {
  if (server.type) return server.type;
  return server.command !== undefined ? 'stdio' : 'http';
}
