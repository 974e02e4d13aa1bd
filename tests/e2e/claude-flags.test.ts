import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, callTools, say } from '../helpers/anthropic-server.js';
import { ndjson, runKeel } from '../helpers/cli.js';
import { toolNamesOf, toolResultsOf } from '../helpers/conversations.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();
const extraDirs: string[] = [];
afterEach(() => {
  for (const dir of extraDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("Claude Code's flags", () => {
  it('--allowedTools and --disallowedTools take rules with Claude Code tool names', async () => {
    const { env, ws, server } = await prepare([callTool('write_file', { path: 'ok.txt', content: 'yes' }), say('done')]);
    const run = await runKeel(['-p', 'go', '--allowedTools', 'Write,Read', '--disallowedTools=Bash', '--disallowedTools', 'WebFetch'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(readFileSync(ws.path('ok.txt'), 'utf8')).toBe('yes');
    const tools = toolNamesOf(server.messageRequests()[0]!);
    expect(tools).toContain('write_file');
    expect(tools).not.toContain('bash');
    expect(tools).not.toContain('web_fetch');
  });

  it('--dangerously-skip-permissions is bypassPermissions (auto), yet a protected path is still asked (and so denied headless)', async () => {
    const { env, ws, server } = await prepare([
      callTools({ name: 'write_file', input: { path: 'plain.txt', content: 'p' } }, { name: 'write_file', input: { path: 'agent.config.ts', content: 'export default {}' } }),
      say('done'),
    ]);
    const run = await runKeel(['-p', 'go', '--dangerously-skip-permissions', '--output-format', 'stream-json'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(ndjson(run.stdout)[0]).toMatchObject({ subtype: 'init', permissionMode: 'auto' });
    expect(existsSync(ws.path('plain.txt'))).toBe(true);
    expect(existsSync(ws.path('agent.config.ts'))).toBe(false);
    expect(toolResultsOf(server.messageRequests()[1]!)[1]).toMatchObject({ is_error: true, content: expect.stringContaining('Permission denied') });
  });

  it('--add-dir makes another directory count as inside the project', async () => {
    const other = mkdtempSync(path.join(tmpdir(), 'keel-add-dir-'));
    extraDirs.push(other);
    const target = path.join(other, 'notes.txt');
    const script = () => [callTool('write_file', { path: target, content: 'n' }), say('done')];
    const without = await prepare(script());
    await runKeel(['-p', 'go', '--permission-mode', 'acceptEdits'], { cwd: without.ws.dir, env: without.env });
    expect(existsSync(target)).toBe(false);
    const withDir = await prepare(script());
    const run = await runKeel(['-p', 'go', '--permission-mode', 'acceptEdits', '--add-dir', other], { cwd: withDir.ws.dir, env: withDir.env });
    expect(run.code).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('n');
  });

  it('--system-prompt, --append-system-prompt, --session-id, --tools= and --max-turns=', async () => {
    const { env, ws, server } = await prepare([say('hi')]);
    const id = '0b6c3a52-9a43-4c4e-8d0e-2f6a5a1b7c11';
    const run = await runKeel(
      ['-p', 'go', '--system-prompt', 'You are terse.', '--append-system-prompt=Always cite files.', `--session-id=${id}`, '--tools=Read,Grep', '--max-turns=1', '--output-format', 'json'],
      { cwd: ws.dir, env },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ session_id: id, result: 'hi' });
    const request = server.messageRequests()[0]!;
    const system = request.body.system.map((b: { text: string }) => b.text);
    expect(system[0]).toBe('You are terse.');
    expect(system[system.length - 1]).toBe('Always cite files.');
    expect(toolNamesOf(request)).toEqual(['read_file', 'grep']);
  });

  it('--session-id of a session that exists is refused: the file keeps one conversation, and the model is not called', async () => {
    const { env, ws, server } = await prepare([say('first answer'), say('never sent')]);
    const id = '6d1f0c7e-3b2a-4f9d-8c5e-1a2b3c4d5e6f';
    expect((await runKeel(['-p', 'first', '--session-id', id], { cwd: ws.dir, env })).code).toBe(0);
    const dir = path.join(ws.home, 'sessions', readdirSync(path.join(ws.home, 'sessions'))[0]!);
    const before = readFileSync(path.join(dir, `${id}.jsonl`), 'utf8');
    const again = await runKeel(['-p', 'second', '--session-id', id], { cwd: ws.dir, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(`keel: session id ${id} is already in use: resume it with --resume ${id}, or leave out --session-id for a new one\n`);
    expect(readFileSync(path.join(dir, `${id}.jsonl`), 'utf8')).toBe(before);
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('lists only the tools --tools gives in the stream-json init line', async () => {
    const { env, ws } = await prepare([say('hi')]);
    const run = await runKeel(['-p', 'go', '--tools', 'Read,Grep', '--output-format', 'stream-json', '--verbose'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const init = ndjson(run.stdout)[0] as { subtype: string; tools: string[] };
    expect(init.subtype).toBe('init');
    expect(init.tools).toEqual(['read_file', 'grep']);
  });

  it('rejects bad values with one line naming the flag', async () => {
    const { env, ws } = await prepare([]);
    const badId = await runKeel(['-p', 'go', '--session-id', 'not-a-uuid'], { cwd: ws.dir, env });
    expect(badId.code).toBe(2);
    expect(badId.stderr).toBe('keel: --session-id: expected a UUID, got "not-a-uuid"\n');
    const badTool = await runKeel(['-p', 'go', '--permission-prompt-tool', 'mcp__auth__prompt'], { cwd: ws.dir, env });
    expect(badTool.code).toBe(2);
    expect(badTool.stderr).toBe('keel: --permission-prompt-tool: only "stdio" is supported, got "mcp__auth__prompt"\n');
    const badRule = await runKeel(['-p', 'go', '--allowedTools', 'Bash(rm'], { cwd: ws.dir, env });
    expect(badRule.code).toBe(2);
    expect(badRule.stderr).toBe('keel: --allowedTools: invalid permission rule "Bash(rm" (expected ToolName or ToolName(specifier), e.g. Bash(npm test))\n');
  });
});

describe('--include-partial-messages with -p', () => {
  it('adds stream_event lines to stream-json output', async () => {
    const { env, ws } = await prepare([say('partial text here')]);
    const run = await runKeel(['-p', 'go', '--output-format=stream-json', '--verbose', '--include-partial-messages'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const events = ndjson(run.stdout).filter((l) => l.type === 'stream_event').map((l) => l.event);
    expect(events.map((e) => e.type)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text).join('')).toBe('partial text here');
  });
});
