/**
 * The README's editor snippets, run as written: the Zed and JetBrains `agent_servers` entries start `keel acp`
 * (with `keel` on PATH, as an installed package puts it) and serve a prompt; the registry entry matches this package.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { client, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { say } from '../helpers/anthropic-server.js';
import { KEEL_BIN, NODE_PATH } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const prepare = useScriptedProjects();
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** The JSON code blocks of the README's "Editors" section, in order. */
function snippets(): unknown[] {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('## Editors: the Agent Client Protocol (`keel acp`)');
  const end = readme.indexOf('\n## ', start + 10);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
}

interface AgentServer {
  type?: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
}

async function serveOnePrompt(server: AgentServer, extraEnv: Record<string, string>, cwd: string): Promise<string> {
  const bin = mkdtempSync(path.join(tmpdir(), 'keel-path-'));
  cleanups.push(() => rmSync(bin, { recursive: true, force: true }));
  symlinkSync(KEEL_BIN, path.join(bin, 'keel'));
  const env = { PATH: `${bin}${path.delimiter}${NODE_PATH}`, LANG: 'C.UTF-8', ...server.env, ...extraEnv };
  const child = spawn(server.command, server.args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGKILL'));
  let text = '';
  const app = client({ name: 'snippet-check' }).onNotification('session/update', ({ params }) => {
    if (params.update.sessionUpdate === 'agent_message_chunk' && params.update.content.type === 'text') text += params.update.content.text;
  });
  const connection = app.connect(ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  await connection.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await connection.agent.request('session/new', { cwd, mcpServers: [] });
  const { stopReason } = await connection.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
  expect(stopReason).toBe('end_turn');
  child.stdin.end();
  await new Promise((resolve) => child.on('close', resolve));
  return text;
}

describe("the README's editor snippets", () => {
  it('Zed and JetBrains: the agent_servers entry as written starts keel acp', async () => {
    const [zed, jetbrains] = snippets() as Array<{ agent_servers: Record<string, AgentServer> }>;
    expect(Object.keys(zed!.agent_servers)).toEqual(['Keel']);
    expect(zed!.agent_servers.Keel!.type).toBe('custom');
    for (const entry of [zed!, jetbrains!]) {
      const { ws, env } = await prepare([say('Hello, editor.')]);
      // The snippet's own env (its placeholder key) is used as written; the test adds where the API and home are.
      const text = await serveOnePrompt(entry.agent_servers.Keel!, { ANTHROPIC_BASE_URL: env.ANTHROPIC_BASE_URL!, KEEL_HOME: env.KEEL_HOME! }, ws.dir);
      expect(text).toBe('Hello, editor.');
    }
  });

  it('the registry entry names this package, its version and keel acp', async () => {
    const registry = snippets()[2] as { id: string; name: string; version: string; description: string; license: string; distribution: { npx: { package: string; args: string[] } } };
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string; license: string; bin: Record<string, string> };
    expect(registry.id).toMatch(/^[a-z][a-z0-9-]*$/);
    expect(registry).toMatchObject({ version: pkg.version, license: pkg.license, distribution: { npx: { package: `${pkg.name}@${pkg.version}`, args: ['acp'] } } });
    expect(registry.name && registry.description).toBeTruthy();
    // npx runs the package's only binary with the args: that is `keel acp`.
    expect(Object.keys(pkg.bin)).toEqual(['keel']);
    const { ws, env } = await prepare([say('From the registry.')]);
    expect(await serveOnePrompt({ command: 'keel', args: registry.distribution.npx.args }, env, ws.dir)).toBe('From the registry.');
  });
});
