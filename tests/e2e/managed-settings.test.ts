/**
 * Managed settings through the binary, with the managed folder pointed at a temp dir (KEEL_MANAGED_SETTINGS_DIR):
 * what they pin beats flags, user and project config, SDK hosts and sub-agents; a bad file stops every mode.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, callTools, say } from '../helpers/anthropic-server.js';
import { ndjson, runKeel } from '../helpers/cli.js';
import { conversation, routeConversations, toolResultsOf } from '../helpers/conversations.js';
import { EVERYTHING, FILESYSTEM } from '../helpers/mcp.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();
const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** A managed folder holding `settings` (an object, or raw text), and the env that points Keel at it. */
function managed(settings: object | string): { file: string; env: Record<string, string> } {
  const dir = tempDir('keel-managed-');
  const file = path.join(dir, 'managed-settings.json');
  writeFileSync(file, typeof settings === 'string' ? settings : JSON.stringify(settings));
  return { file, env: { KEEL_MANAGED_SETTINGS_DIR: dir } };
}

/** A file outside the workspace that nothing may change. */
function canary(): { dir: string; file: string } {
  const dir = tempDir('keel-managed-canary-');
  const file = path.join(dir, 'canary.txt');
  writeFileSync(file, 'original');
  return { dir, file };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('managed settings', () => {
  it('a managed deny rule beats --allowedTools and --dangerously-skip-permissions', async () => {
    const target = canary();
    const { env, ws, server } = await prepare([
      callTools({ name: 'write_file', input: { path: target.file, content: 'pwned' } }, { name: 'bash', input: { command: `printf pwned > ${target.file}` } }),
      say('done'),
    ]);
    const policy = managed({ permissions: { deny: [`Write(${target.dir})`, 'Bash(printf:*)'] } });
    const run = await runKeel(['-p', 'go', '--allowedTools', 'Write,Bash,Edit', '--dangerously-skip-permissions'], { cwd: ws.dir, env: { ...env, ...policy.env } });
    expect(run.code).toBe(0);
    expect(readFileSync(target.file, 'utf8')).toBe('original');
    const results = toolResultsOf(server.messageRequests()[1]!);
    expect(results[0]).toMatchObject({ is_error: true, content: expect.stringContaining(`denied by the rule "Write(${target.dir})"`) });
    expect(results[1]).toMatchObject({ is_error: true, content: expect.stringContaining('Permission denied') });
  });

  it('disableBypassPermissionsMode refuses --permission-mode auto, --dangerously-skip-permissions and a config asking for it', async () => {
    const { env, ws, server } = await prepare([say('never')]);
    const policy = managed({ permissions: { disableBypassPermissionsMode: 'disable' } });
    const all = { ...env, ...policy.env };
    const why = `disabled by managed settings \\(disableBypassPermissionsMode in ${escape(policy.file)}\\)\n$`;
    for (const [args, label] of [
      [['--permission-mode', 'auto'], '--permission-mode'],
      [['--permission-mode', 'bypassPermissions'], '--permission-mode'],
      [['--dangerously-skip-permissions'], '--dangerously-skip-permissions'],
    ] as const) {
      const run = await runKeel(['-p', 'go', ...args], { cwd: ws.dir, env: all });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(new RegExp(`^keel: ${label}: .*${why}`));
    }
    const userConfig = path.join(ws.home, 'agent.config.json');
    writeFileSync(userConfig, JSON.stringify({ permissionMode: 'auto' }));
    const fromFile = await runKeel(['-p', 'go'], { cwd: ws.dir, env: all });
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toMatch(new RegExp(`^keel: ${escape(userConfig)}: permissionMode: .*${why}`));
    expect(server.messageRequests()).toHaveLength(0);
    // Without the managed file the same flag runs: the refusal is the policy's doing.
    rmSync(userConfig);
    const free = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(free.code).toBe(0);
  });

  it('a managed model cannot be overridden by --model or ANTHROPIC_MODEL', async () => {
    const { env, ws, server } = await prepare([say('hi')]);
    const policy = managed({ model: 'claude-managed-model' });
    const run = await runKeel(['-p', 'go', '--model', 'opus'], { cwd: ws.dir, env: { ...env, ...policy.env, ANTHROPIC_MODEL: 'claude-from-env' } });
    expect(run.code).toBe(0);
    expect(server.messageRequests()[0]!.body.model).toBe('claude-managed-model');
  });

  it("a custom command's model: cannot switch away from the managed model mid-session", async () => {
    const { env, ws, server } = await prepare([say('hi')]);
    ws.write('.claude/commands/big.md', '---\nmodel: claude-other-model\n---\nThink hard about $ARGUMENTS.\n');
    const policy = managed({ model: 'claude-managed-model' });
    const run = await runKeel(['-p', '/big the plan'], { cwd: ws.dir, env: { ...env, ...policy.env } });
    expect(run.code).toBe(0);
    expect(server.messageRequests()[0]!.body.model).toBe('claude-managed-model');
    expect(run.stderr).toContain(`model claude-other-model is not allowed: managed settings pin claude-managed-model (${policy.file})`);
  });

  it("a managed env variable (how telemetry is pinned) wins over the shell's and the user's", async () => {
    const { env, ws } = await prepare([callTool('bash', { command: 'printf "$KEEL_TEST_PINNED" > seen.txt' }), say('done')]);
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ env: { KEEL_TEST_PINNED: 'user' } }));
    const policy = managed({ env: { KEEL_TEST_PINNED: 'managed' } });
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env: { ...env, ...policy.env, KEEL_TEST_PINNED: 'shell' } });
    expect(run.code).toBe(0);
    expect(readFileSync(ws.path('seen.txt'), 'utf8')).toBe('managed');
  });

  it("allowManagedHooksOnly ignores the user's and the project's hooks and runs the managed ones", async () => {
    const { env, ws } = await prepare([say('hi'), say('hi')]);
    const marks = tempDir('keel-managed-hooks-');
    const mark = (name: string) => path.join(marks, name);
    const sessionStart = (file: string) => ({ SessionStart: [{ hooks: [{ type: 'command', command: `touch ${file}` }] }] });
    writeFileSync(path.join(ws.home, 'agent.config.json'), JSON.stringify({ hooks: sessionStart(mark('user')) }));
    ws.write('.claude/settings.json', JSON.stringify({ hooks: sessionStart(mark('project')) }));
    const policy = managed({ allowManagedHooksOnly: true, hooks: sessionStart(mark('managed')) });
    const run = await runKeel(['-p', 'go', '--trust'], { cwd: ws.dir, env: { ...env, ...policy.env } });
    expect(run.code).toBe(0);
    expect(existsSync(mark('managed'))).toBe(true);
    expect(existsSync(mark('user'))).toBe(false);
    expect(existsSync(mark('project'))).toBe(false);
    expect(run.stderr).toContain(`hooks ignored: managed settings allow only managed hooks (allowManagedHooksOnly in ${policy.file})`);
    // The same hooks run when no managed file restricts them.
    const free = await runKeel(['-p', 'go', '--trust'], { cwd: ws.dir, env });
    expect(free.code).toBe(0);
    expect(existsSync(mark('user')) || existsSync(mark('project'))).toBe(true);
  });

  it('a server outside allowedMcpServers or in deniedMcpServers never starts', async () => {
    const { env, ws } = await prepare();
    const started = path.join(tempDir('keel-managed-mcp-'), 'rogue-started');
    ws.write(
      '.mcp.json',
      JSON.stringify({
        mcpServers: {
          files: { command: process.execPath, args: [FILESYSTEM, ws.dir] },
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio', ws.dir] },
          rogue: { command: process.execPath, args: ['-e', `require('fs').writeFileSync(${JSON.stringify(started)}, 'x')`] },
        },
      }),
    );
    await runKeel(['trust'], { cwd: ws.dir, env });
    const policy = managed({ allowedMcpServers: [{ serverName: 'files' }, { serverName: 'everything' }], deniedMcpServers: [{ serverName: 'everything' }] });
    const run = await runKeel(['mcp', 'list'], { cwd: ws.dir, env: { ...env, ...policy.env }, timeoutMs: 60_000 });
    expect(run.stdout).toMatch(/^files {2}connected/m);
    expect(run.stdout).not.toMatch(/^(everything|rogue) /m);
    expect(run.stderr).toContain(`MCP server "everything" is denied by managed settings (deniedMcpServers in ${policy.file}); not started`);
    expect(run.stderr).toContain(`MCP server "rogue" is not in the managed allow list (allowedMcpServers in ${policy.file}); not started`);
    expect(existsSync(started)).toBe(false);
    // Listed by its exact command line, the same program is allowed and starts.
    const byCommand = managed({ allowedMcpServers: [{ serverCommand: [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(started)}, 'x')`] }] });
    await runKeel(['mcp', 'get', 'rogue'], { cwd: ws.dir, env: { ...env, ...byCommand.env }, timeoutMs: 60_000 });
    expect(existsSync(started)).toBe(true);
  }, 90_000);

  it('keel config labels what managed settings set "(managed)"', async () => {
    const { env, ws } = await prepare();
    const policy = managed({
      model: 'claude-managed-model',
      permissions: { deny: ['Bash(rm:*)'], disableBypassPermissionsMode: 'disable' },
      allowManagedHooksOnly: true,
      allowedMcpServers: [{ serverName: 'files' }],
    });
    const run = await runKeel(['config'], { cwd: ws.dir, env: { ...env, ...policy.env } });
    expect(run.code).toBe(0);
    const managedBy = `(${policy.file} (managed))`;
    expect(run.stdout).toContain(`model = "claude-managed-model"  ${managedBy}`);
    expect(run.stdout).toContain(`permissions = {"allow":[],"ask":[],"deny":["Bash(rm:*)"]}  ${managedBy}`);
    expect(run.stdout).toContain(`disableBypassPermissionsMode = "disable"  ${managedBy}`);
    expect(run.stdout).toContain(`allowManagedHooksOnly = true  ${managedBy}`);
    expect(run.stdout).toContain(`allowedMcpServers = [{"serverName":"files"}]  ${managedBy}`);
  });

  it('a malformed managed file stops Keel in every mode, naming the file and the key', async () => {
    const { env, ws, server } = await prepare([say('never')]);
    const cases: Array<[settings: string | object, fault: RegExp]> = [
      ['{ "model": ', /managed settings: not valid JSON/],
      [{ model: 3 }, /managed settings: model: /],
      [{ permisions: { deny: ['Bash'] } }, /managed settings: permisions: unknown key/],
      [{ permissions: { disableBypassPermissionsMode: 'yes' } }, /managed settings: permissions\.disableBypassPermissionsMode: must be "disable"/],
      [{ allowedMcpServers: [{ serverName: 'a', serverUrl: 'https://x' }] }, /managed settings: allowedMcpServers\.0: set exactly one/],
      ['[]', /managed settings: must hold a JSON object/],
    ];
    const modes = [['-p', 'go'], ['config'], ['--input-format', 'stream-json', '--output-format', 'stream-json'], ['mcp', 'list']];
    for (const [settings, fault] of cases) {
      const policy = managed(settings);
      for (const args of modes) {
        const run = await runKeel(args, { cwd: ws.dir, env: { ...env, ...policy.env }, input: '' });
        expect(run.code, `${args.join(' ')} with ${JSON.stringify(settings)}`).not.toBe(0);
        expect(run.stderr).toMatch(new RegExp(`^keel: ${escape(policy.file)}: ${fault.source}`));
        expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      }
    }
    const missing = await runKeel(['-p', 'go'], { cwd: ws.dir, env: { ...env, KEEL_MANAGED_SETTINGS_DIR: path.join(ws.home, 'nowhere') } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^keel: KEEL_MANAGED_SETTINGS_DIR: not a folder: /);
    expect(server.messageRequests()).toHaveLength(0);
  }, 120_000);

  it("an SDK host's set_permission_mode to bypass and set_model are refused, and the pinned model answers", async () => {
    const { env, ws, server } = await prepare([say('hi')]);
    const policy = managed({ model: 'claude-managed-model', permissions: { disableBypassPermissionsMode: 'disable' } });
    const control = (id: string, request: object) => JSON.stringify({ type: 'control_request', request_id: id, request });
    const input = [
      control('mode', { subtype: 'set_permission_mode', mode: 'bypassPermissions' }),
      control('model', { subtype: 'set_model', model: 'claude-other' }),
      JSON.stringify({ type: 'user', message: { role: 'user', content: 'go' }, parent_tool_use_id: null, session_id: '' }),
    ].join('\n');
    const run = await runKeel(['--input-format', 'stream-json', '--output-format', 'stream-json'], { cwd: ws.dir, env: { ...env, ...policy.env }, input: `${input}\n` });
    expect(run.code).toBe(0);
    const responses = ndjson(run.stdout).filter((m) => (m as { type: string }).type === 'control_response');
    expect(responses).toEqual([
      { type: 'control_response', response: expect.objectContaining({ subtype: 'error', request_id: 'mode', error: expect.stringContaining(`disabled by managed settings (${policy.file})`) }) },
      { type: 'control_response', response: expect.objectContaining({ subtype: 'error', request_id: 'model', error: expect.stringContaining(`managed settings pin the model claude-managed-model`) }) },
    ]);
    expect(server.messageRequests()[0]!.body.model).toBe('claude-managed-model');
    // The session's own command cannot switch to bypass either.
    const slash = await runKeel(['-p', '/permissions mode auto'], { cwd: ws.dir, env: { ...env, ...policy.env } });
    expect(slash.code).not.toBe(0);
    expect(slash.stdout + slash.stderr).toContain(`/permissions mode: the auto (bypassPermissions) mode is disabled by managed settings (${policy.file})`);
  });

  it('refuses what would slip past the policy: no permissions plugin, a plugin posing as managed, an unreadable file', async () => {
    const { env, ws } = await prepare();
    const policy = managed({ permissions: { deny: ['Bash'] } });
    const userConfig = path.join(ws.home, 'agent.config.json');
    writeFileSync(userConfig, JSON.stringify({ disable: ['permissions'] }));
    const noPermissions = await runKeel(['-p', 'go'], { cwd: ws.dir, env: { ...env, ...policy.env } });
    expect(noPermissions.code).toBe(2);
    expect(noPermissions.stderr).toMatch(/^keel: managed settings \(.*\) set permission policy, which needs the permissions plugin; this configuration does not load it\n$/);
    rmSync(userConfig);
    writeFileSync(
      path.join(ws.home, 'agent.config.ts'),
      "export default { plugins: [{ name: 'sneaky', kernel: '^1.0.0', configLayers: () => [{ kind: 'managed', source: 'sneaky', values: { model: 'x' } }], apply() {} }] };\n",
    );
    const posing = await runKeel(['-p', 'go'], { cwd: ws.dir, env: { ...env, ...policy.env } });
    expect(posing.code).toBe(2);
    expect(posing.stderr).toBe('keel: plugin sneaky: contributed a managed layer (sneaky); only managed-settings files are managed\n');
    // A managed path that is there but cannot be read (here a folder) is an error, never "no policy".
    const unreadable = tempDir('keel-managed-');
    mkdirSync(path.join(unreadable, 'managed-settings.json'));
    const run = await runKeel(['-p', 'go'], { cwd: ws.dir, env: { ...env, KEEL_MANAGED_SETTINGS_DIR: unreadable } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^keel: ${escape(path.join(unreadable, 'managed-settings.json'))}: managed settings: cannot be read \\(EISDIR`));
  });

  it('a sub-agent re-reads managed settings: it cannot do what they deny, and runs on the pinned model', async () => {
    const target = canary();
    const { env, ws, server } = await prepare([], {
      route: routeConversations({
        PARENT: [callTool('agent', { task: 'CHILD try it' }, 'toolu_d'), say('done')],
        CHILD: [callTool('write_file', { path: target.file, content: 'pwned' }, 'toolu_w'), say('refused')],
      }),
    });
    const policy = managed({ model: 'claude-managed-model', permissions: { deny: [`Write(${target.dir})`] } });
    const run = await runKeel(['-p', 'PARENT go', '--permission-mode', 'auto', '--allowedTools', 'Write'], { cwd: ws.dir, env: { ...env, ...policy.env }, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    const child = conversation(server.requests, 'CHILD');
    expect(toolResultsOf(child[1]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining(`denied by the rule "Write(${target.dir})"`) });
    // The model is never handed to a child: the pinned one comes from its own reading of the managed file.
    expect(child.every((r) => r.body.model === 'claude-managed-model')).toBe(true);
    expect(readFileSync(target.file, 'utf8')).toBe('original');
  });
});
