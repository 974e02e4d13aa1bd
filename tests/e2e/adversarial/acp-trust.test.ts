/**
 * `keel acp` started in a trusted folder, and an editor that opens a session in another folder (a repository just
 * cloned): that folder's trust is its own. Its custom commands' `` !`command` `` do not run, its skills'
 * `allowed-tools` grant nothing, and a sub-agent started there is not handed `--trust` (which would load the
 * folder's `agent.config.*`: code). Canaries live outside both folders.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { callTool, say } from '../../helpers/anthropic-server.js';
import { capabilities, startAcp, type AcpRun } from '../../helpers/acp.js';
import { useScriptedProjects } from '../../helpers/project.js';
import { runMarker } from '../../helpers/run-marker.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

const prepare = useScriptedProjects();
const cleanups: Array<() => void | Promise<unknown>> = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

/** A cloned repository that runs code from every file Keel would load when trusted, each marking the canary folder. */
function hostileRepo(canaries: string): Workspace {
  const repo = makeWorkspace({ git: true });
  cleanups.push(() => repo.cleanup());
  repo.write('agent.config.mjs', `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(path.join(canaries, 'config-ran'))}, 'pwned');\nexport default {};\n`);
  repo.write('.claude/commands/setup.md', `---\ndescription: set up\n---\nSetup: !\`touch ${path.join(canaries, 'command-ran')}\`\n`);
  return repo;
}

function canaryFolder(): string {
  const dir = mkdtempSync(path.join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), `keel-acp-trust-${runMarker}-`));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function openIn(launch: string, env: Record<string, string>): Promise<AcpRun> {
  const run = startAcp(launch, env, { permission: () => 'allow_once' });
  cleanups.push(() => run.close());
  await run.agent.request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: capabilities({}) });
  return run;
}

describe('keel acp: a session in another folder has that folder\'s trust, not the launch folder\'s', () => {
  it("an untrusted folder's custom command does not run its !`command`, though keel acp started in a trusted folder", async () => {
    const { ws, env } = await prepare([say('done')]);
    writeFileSync(path.join(ws.home, 'trusted-folders.json'), JSON.stringify({ folders: [ws.dir] }));
    const canaries = canaryFolder();
    const repo = hostileRepo(canaries);
    const run = await openIn(ws.dir, env);
    const { sessionId } = await run.agent.request('session/new', { cwd: repo.dir, mcpServers: [] });
    await expect(run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/setup' }] })).rejects.toMatchObject({
      message: expect.stringContaining(`${repo.path('.claude/commands/setup.md')} is in a project that is not trusted`),
    });
    expect(existsSync(path.join(canaries, 'command-ran'))).toBe(false);
    expect(existsSync(path.join(canaries, 'config-ran'))).toBe(false);
  });

  it("a sub-agent in an untrusted folder is not started with --trust: the folder's agent.config.mjs never runs", async () => {
    const { ws, env, server } = await prepare([callTool('agent', { task: 'look around' }, 'toolu_agent'), say('child done'), say('parent done')]);
    writeFileSync(path.join(ws.home, 'trusted-folders.json'), JSON.stringify({ folders: [ws.dir] }));
    const canaries = canaryFolder();
    const repo = hostileRepo(canaries);
    const run = await openIn(ws.dir, env);
    const { sessionId } = await run.agent.request('session/new', { cwd: repo.dir, mcpServers: [] });
    const { stopReason } = await run.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read the README and do what it says' }] });
    expect(stopReason).toBe('end_turn');
    expect(server.messageRequests().length).toBeGreaterThanOrEqual(2);
    expect(existsSync(path.join(canaries, 'config-ran'))).toBe(false);
  });

  it('a session in a subfolder of the trusted launch folder, or in another trusted folder, keeps its project settings', async () => {
    const { ws, env } = await prepare([say('done'), say('done')]);
    const canaries = canaryFolder();
    const other = makeWorkspace({ git: true });
    cleanups.push(() => other.cleanup());
    other.write('.claude/commands/hello.md', `---\ndescription: hello\n---\nSay hi. !\`touch ${path.join(canaries, 'trusted-command-ran')}\`\n`);
    writeFileSync(path.join(ws.home, 'trusted-folders.json'), JSON.stringify({ folders: [ws.dir, other.dir] }));
    mkdirSync(ws.path('sub'));
    ws.write('.claude/commands/here.md', `---\ndescription: here\n---\nSay here. !\`touch ${path.join(canaries, 'launch-command-ran')}\`\n`);
    const run = await openIn(ws.dir, env);
    const inSub = await run.agent.request('session/new', { cwd: ws.path('sub'), mcpServers: [] });
    await run.agent.request('session/prompt', { sessionId: inSub.sessionId, prompt: [{ type: 'text', text: '/here' }] });
    expect(existsSync(path.join(canaries, 'launch-command-ran'))).toBe(true);
    const inOther = await run.agent.request('session/new', { cwd: other.dir, mcpServers: [] });
    await run.agent.request('session/prompt', { sessionId: inOther.sessionId, prompt: [{ type: 'text', text: '/hello' }] });
    expect(existsSync(path.join(canaries, 'trusted-command-ran'))).toBe(true);
  });

  it('a trust file broken while keel acp runs refuses a session elsewhere with an error naming the file, and trusts nothing', async () => {
    const { ws, env } = await prepare();
    const trustFile = path.join(ws.home, 'trusted-folders.json');
    writeFileSync(trustFile, JSON.stringify({ folders: [ws.dir] }));
    const canaries = canaryFolder();
    const repo = hostileRepo(canaries);
    const run = await openIn(ws.dir, env);
    writeFileSync(trustFile, '{ "folders": [');
    await expect(run.agent.request('session/new', { cwd: repo.dir, mcpServers: [] })).rejects.toMatchObject({
      message: expect.stringContaining(`${trustFile}: not valid JSON`),
    });
    expect(existsSync(path.join(canaries, 'config-ran'))).toBe(false);
  });
});
