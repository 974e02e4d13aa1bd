/** `keel mcp list | get <name> | add <name> <command|url> [args…] | remove <name>`. */
import { Command, CommanderError } from 'commander';
import { KeelError, type Io, type Kernel, type McpServerConfig } from '../../kernel/index.js';
import { announceProjectServers } from './approvals.js';
import type { BridgeLimits } from './bridge.js';
import { managedBlock, managedServers } from './managed.js';
import { holdOpen } from './keep-alive.js';
import { projectFile, readServersFile, transportOf, userFile, writeServer } from './settings.js';

type Scope = 'project' | 'user';

function scopeFile(kernel: Kernel, scope: Scope): string {
  return scope === 'project' ? projectFile(kernel.config.projectRoot) : userFile(kernel.config.keelHome);
}

function pairs(values: string[], separator: RegExp, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const value of values) {
    const match = separator.exec(value);
    if (!match || match.index === 0) throw new KeelError(`${flag}: expected ${flag === '--env' ? 'KEY=value' : '"Name: value"'}, got "${value}"`, { exitCode: 2 });
    out[value.slice(0, match.index).trim()] = value.slice(match.index + match[0].length).trim();
  }
  return out;
}

const collect = (value: string, all: string[] = []) => [...all, value];

async function connectAll(kernel: Kernel, configured: Record<string, McpServerConfig>, limits: BridgeLimits, io: Io) {
  // A server managed settings do not allow is never started, here either.
  const { servers, blocked } = managedServers(kernel.config.managed, configured);
  for (const line of blocked) io.stderr.write(`keel: ${line}\n`);
  const listing = announceProjectServers(kernel.config);
  if (listing) io.stderr.write(`keel: warn: ${listing}\n`);
  const { Bridge } = await import('./bridge.js');
  const bridge = new Bridge(kernel, servers, limits, false);
  return holdOpen(async () => {
    await bridge.start();
    const status = bridge.status();
    await bridge.close();
    return status;
  });
}

export async function mcpSubcommand(kernel: Kernel, args: string[], io: Io, limits: BridgeLimits): Promise<number> {
  const out = (text: string) => io.stdout.write(`${text}\n`);
  const program = new Command('keel mcp').description('manage MCP servers').exitOverride();
  program.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  let code = 0;

  program
    .command('list')
    .description('connect to every configured server and show its status, transport, tool count and last error')
    .action(async () => {
      const servers = kernel.config.mcpServers;
      if (Object.keys(servers).length === 0) {
        out('No MCP servers configured (add one with keel mcp add, in .mcp.json or in agent.config.ts).');
        return;
      }
      for (const s of await connectAll(kernel, servers, limits, io)) {
        out(`${s.name}  ${s.status}  ${s.transport}  ${s.tools} tools${s.error ? `  error: ${s.error}` : ''}`);
        if (s.status !== 'connected') code = 1;
      }
    });

  program
    .command('get <name>')
    .description("show one server's settings, where they come from, and its status")
    .action(async (name: string) => {
      const server = kernel.config.mcpServers[name];
      if (!server) throw new KeelError(`no MCP server named "${name}" (configured: ${Object.keys(kernel.config.mcpServers).join(', ') || 'none'})`, { exitCode: 2 });
      out(`${name}:`);
      out(`  source: ${kernel.config.sources[`mcpServers.${name}`] ?? 'config'}`);
      out(`  transport: ${transportOf(server)}`);
      if (server.command !== undefined) out(`  command: ${[server.command, ...(server.args ?? [])].join(' ')}`);
      if (server.url !== undefined) out(`  url: ${server.url}`);
      if (server.env) out(`  env: ${Object.keys(server.env).join(', ')}`);
      if (server.headers) out(`  headers: ${Object.keys(server.headers).join(', ')}`);
      const block = managedBlock(kernel.config.managed, name, server);
      if (block) {
        out(`  status: blocked: ${block}`);
        code = 1;
        return;
      }
      const [s] = await connectAll(kernel, { [name]: server }, limits, io);
      out(`  status: ${s!.status}, ${s!.tools} tools, ${s!.prompts} prompts${s!.error ? `; last error: ${s!.error}` : ''}`);
      if (s!.logFile) out(`  log: ${s!.logFile}`);
      if (s!.status !== 'connected') code = 1;
    });

  program
    .command('add <name> <commandOrUrl> [args...]')
    .description('add a server to the project .mcp.json (--scope user: $KEEL_HOME/mcp.json); put -- before a command with flags')
    .option('-s, --scope <scope>', 'project or user', 'project')
    .option('-t, --transport <transport>', 'stdio, http or sse (default: stdio, or http for a URL)')
    .option('-e, --env <KEY=value>', 'an environment variable for a stdio server (repeatable)', collect)
    .option('-H, --header <"Name: value">', 'an HTTP header for a remote server (repeatable)', collect)
    .option('--timeout <ms>', 'milliseconds a tool call may take')
    .action((name: string, target: string, rest: string[], opts: { scope: string; transport?: string; env?: string[]; header?: string[]; timeout?: string }) => {
      if (!/^[\w-]+$/.test(name)) throw new KeelError(`keel mcp add: the name "${name}" may hold only letters, digits, _ and -`, { exitCode: 2 });
      if (opts.scope !== 'project' && opts.scope !== 'user') throw new KeelError(`--scope: expected project or user, got "${opts.scope}"`, { exitCode: 2 });
      const remote = /^https?:\/\//.test(target);
      const transport = opts.transport ?? (remote ? 'http' : 'stdio');
      if (!['stdio', 'http', 'sse'].includes(transport)) throw new KeelError(`--transport: expected stdio, http or sse, got "${transport}"`, { exitCode: 2 });
      const server: McpServerConfig =
        transport === 'stdio'
          ? { command: target, args: rest, ...(opts.env?.length ? { env: pairs(opts.env, /=/, '--env') } : {}) }
          : { type: transport as 'http' | 'sse', url: target, ...(opts.header?.length ? { headers: pairs(opts.header, /:\s*/, '--header') } : {}) };
      if (transport !== 'stdio' && rest.length) throw new KeelError(`keel mcp add: a ${transport} server takes a URL and no arguments (got ${rest.join(' ')})`, { exitCode: 2 });
      if (transport !== 'stdio' && !remote) throw new KeelError(`keel mcp add: a ${transport} server needs an http(s) URL, got "${target}"`, { exitCode: 2 });
      if (opts.timeout !== undefined) {
        const ms = Number(opts.timeout);
        if (!Number.isInteger(ms) || ms <= 0) throw new KeelError(`--timeout: expected milliseconds, got "${opts.timeout}"`, { exitCode: 2 });
        server.timeout = ms;
      }
      const file = scopeFile(kernel, opts.scope);
      const replaced = writeServer(file, name, server);
      out(`${replaced ? 'Replaced' : 'Added'} MCP server ${name} in ${file}`);
    });

  program
    .command('remove <name>')
    .description('remove a server from the project .mcp.json or $KEEL_HOME/mcp.json')
    .option('-s, --scope <scope>', 'project or user (default: wherever it is)')
    .action((name: string, opts: { scope?: string }) => {
      const scopes: Scope[] = opts.scope === 'project' || opts.scope === 'user' ? [opts.scope] : ['project', 'user'];
      if (opts.scope !== undefined && scopes.length !== 1) throw new KeelError(`--scope: expected project or user, got "${opts.scope}"`, { exitCode: 2 });
      const file = scopes.map((s) => scopeFile(kernel, s)).find((f) => name in readServersFile(f));
      if (!file) {
        throw new KeelError(`no MCP server named "${name}" in ${scopes.map((s) => scopeFile(kernel, s)).join(' or ')} (servers in agent.config.ts are edited there)`, { exitCode: 2 });
      }
      writeServer(file, name, undefined);
      out(`Removed MCP server ${name} from ${file}`);
    });

  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    throw err;
  }
  if (args.length === 0) {
    program.outputHelp();
    return 2;
  }
  return code;
}
