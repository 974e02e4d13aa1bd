/** User hooks (Claude Code's format) through the built CLI: blocking, allowing, context, timeouts, trust. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();

/** Writes the user config ($KEEL_HOME/agent.config.json) with these hooks. */
function userHooks(home: string, hooks: object): void {
  writeFileSync(path.join(home, 'agent.config.json'), JSON.stringify({ hooks }));
}
const cmd = (command: string, timeout?: number) => [{ hooks: [{ type: 'command', command, ...(timeout ? { timeout } : {}) }] }];
const matching = (matcher: string, command: string) => [{ matcher, hooks: [{ type: 'command', command }] }];

function results(s: ScriptedServer): Record<string, { content: unknown; is_error?: boolean }> {
  const out: Record<string, { content: unknown; is_error?: boolean }> = {};
  for (const r of s.messageRequests()) for (const m of r.body.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') out[b.tool_use_id] = b;
  return out;
}
const text = (r: { content: unknown } | undefined) => (typeof r?.content === 'string' ? r.content : JSON.stringify(r?.content ?? ''));
const systemOf = (s: ScriptedServer, i: number) => JSON.stringify(s.messageRequests()[i]!.body.system);

describe('PreToolUse', () => {
  it('exit 2 blocks the call and feeds stderr to the model; the tool input arrives as JSON on stdin', async () => {
    const { env, ws, server } = await prepare([callTool('bash', { command: 'echo hi > made.txt' }, 'b1'), say('ok')]);
    const seen = path.join(ws.home, 'seen.json');
    userHooks(ws.home, { PreToolUse: matching('Bash', `cat > ${seen}; echo "no shell for you" >&2; exit 2`) });
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(existsSync(ws.path('made.txt'))).toBe(false);
    expect(results(server).b1).toMatchObject({ is_error: true });
    expect(text(results(server).b1)).toContain('no shell for you');
    const input = JSON.parse(readFileSync(seen, 'utf8'));
    expect(input).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', keel_tool_name: 'bash', tool_input: { command: 'echo hi > made.txt' }, cwd: ws.dir });
    expect(typeof input.session_id).toBe('string');
  });

  it('a JSON deny refuses with its reason; a matcher by Keel name works; other tools are untouched', async () => {
    const { env, ws, server } = await prepare([callTool('write_file', { path: 'a.txt', content: 'x' }, 'w1'), callTool('bash', { command: 'echo ran > b.txt' }, 'b1'), say('ok')]);
    userHooks(ws.home, { PreToolUse: matching('write_file', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"generated files only"}}'`) });
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(text(results(server).w1)).toContain('generated files only');
    expect(existsSync(ws.path('a.txt'))).toBe(false);
    expect(readFileSync(ws.path('b.txt'), 'utf8')).toBe('ran\n');
  });

  it("a hook's allow never loosens the policy: ask mode still refuses an unapproved write", async () => {
    const { env, ws, server } = await prepare([callTool('write_file', { path: 'a.txt', content: 'x' }, 'w1'), say('ok')]);
    userHooks(ws.home, { PreToolUse: matching('.*', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`) });
    const run = await runKeel(['-p', 'go'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(results(server).w1?.is_error).toBe(true);
    expect(existsSync(ws.path('a.txt'))).toBe(false);
  });

  it('a JSON ask is asked (a headless run refuses it)', async () => {
    const { env, ws, server } = await prepare([callTool('bash', { command: 'echo ran > b.txt' }, 'b1'), say('ok')]);
    userHooks(ws.home, { PreToolUse: matching('Bash', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check first"}}'`) });
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(results(server).b1?.is_error).toBe(true);
    expect(existsSync(ws.path('b.txt'))).toBe(false);
  });

  it('a hook past its timeout is stopped with a warning, and the call goes on', async () => {
    const { env, ws, server } = await prepare([callTool('bash', { command: 'echo ran > b.txt' }, 'b1'), say('ok')]);
    userHooks(ws.home, { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'sleep 30; exit 2', timeout: 1 }] }] });
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/PreToolUse hook "sleep 30; exit 2" timed out/);
    expect(results(server).b1?.is_error).toBeFalsy();
    expect(readFileSync(ws.path('b.txt'), 'utf8')).toBe('ran\n');
  });
});

describe('PostToolUse, UserPromptSubmit, SessionStart, Stop, SessionEnd', () => {
  it('PostToolUse exit 2 and additionalContext reach the model in the tool result', async () => {
    const { env, ws, server } = await prepare([callTool('bash', { command: 'echo hi' }, 'b1'), say('ok')]);
    userHooks(ws.home, {
      PostToolUse: [
        { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo "lint failed: 3 errors" >&2; exit 2' }] },
        { matcher: 'bash', hooks: [{ type: 'command', command: `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"remember the style guide"}}'` }] },
      ],
    });
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const result = text(results(server).b1);
    expect(result).toContain('hi');
    expect(result).toContain('lint failed: 3 errors');
    expect(result).toContain('remember the style guide');
  });

  it('UserPromptSubmit and SessionStart output becomes context in the system prompt', async () => {
    const { env, ws, server } = await prepare([say('ok')]);
    userHooks(ws.home, {
      SessionStart: cmd('echo "branch: feature-x"'),
      UserPromptSubmit: cmd(`echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ticket ABC-1 is open"}}'`),
    });
    const run = await runKeel(['-p', 'go'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(systemOf(server, 0)).toContain('branch: feature-x');
    expect(systemOf(server, 0)).toContain('ticket ABC-1 is open');
  });

  it('UserPromptSubmit exit 2 blocks the prompt: the model is never called', async () => {
    const { env, ws, server } = await prepare([say('should not be asked')]);
    userHooks(ws.home, { UserPromptSubmit: cmd('grep -q password && { echo "prompts must not contain secrets" >&2; exit 2; } || exit 0') });
    const run = await runKeel(['-p', 'my password is hunter2'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('blocked by a UserPromptSubmit hook: prompts must not contain secrets');
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('Stop exit 2 sends the model back to work once; stop_hook_active lets the hook end it', async () => {
    const { env, ws, server } = await prepare([say('first answer'), say('second answer')]);
    userHooks(ws.home, { Stop: cmd(`grep -q '"stop_hook_active":true' && exit 0; echo "run the tests first" >&2; exit 2`) });
    const run = await runKeel(['-p', 'go'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('second answer\n');
    const second = server.messageRequests()[1]!.body.messages;
    expect(JSON.stringify(second[second.length - 1])).toContain('run the tests first');
  });

  it('SessionEnd runs when keel exits', async () => {
    const { env, ws } = await prepare([say('ok')]);
    const marker = path.join(ws.home, 'ended.json');
    userHooks(ws.home, { SessionEnd: cmd(`cat > ${marker}`) });
    const run = await runKeel(['-p', 'go'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(JSON.parse(readFileSync(marker, 'utf8'))).toMatchObject({ hook_event_name: 'SessionEnd', reason: 'exit' });
  });
});

describe('trust and bad config', () => {
  it("a project's hooks never run in an untrusted folder; --trust runs them", async () => {
    const { env, ws } = await prepare([say('ok'), say('ok')]);
    const marker = path.join(ws.home, 'project-hook-ran');
    ws.write('agent.config.json', JSON.stringify({ hooks: { SessionStart: cmd(`touch ${marker}`) } }));
    const untrusted = await runKeel(['-p', 'go'], { cwd: ws.dir, env });
    expect(untrusted.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    const trusted = await runKeel(['-p', 'go', '--trust'], { cwd: ws.dir, env });
    expect(trusted.code).toBe(0);
    expect(existsSync(marker)).toBe(true);
  });

  it('a matcher that is not a regular expression is a one-line error naming the file and key', async () => {
    const { env, ws } = await prepare([say('ok')]);
    userHooks(ws.home, { PreToolUse: matching('Bash(', 'true') });
    const run = await runKeel(['-p', 'go'], { cwd: ws.dir, env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^keel: .*agent\.config\.json: hooks\.PreToolUse\.0\.matcher: not a valid regular expression\n$/);
  });
});

describe('PreCompact and Notification', () => {
  it('PreCompact runs before /compact with its trigger and instructions', async () => {
    const { env, ws } = await prepare([say('first'), say('the summary')]);
    const marker = path.join(ws.home, 'precompact.json');
    userHooks(ws.home, { PreCompact: [{ matcher: 'manual', hooks: [{ type: 'command', command: `cat > ${marker}` }] }] });
    expect((await runKeel(['-p', 'hello'], { cwd: ws.dir, env })).code).toBe(0);
    const compact = await runKeel(['-p', '/compact keep it short', '--continue'], { cwd: ws.dir, env });
    expect(compact.code).toBe(0);
    expect(JSON.parse(readFileSync(marker, 'utf8'))).toMatchObject({ hook_event_name: 'PreCompact', trigger: 'manual', custom_instructions: 'keep it short' });
  });

  it('Notification runs when Keel needs the user', async () => {
    const { env, ws } = await prepare([callTool('write_file', { path: 'a.txt', content: 'x' }, 'w1'), say('ok')]);
    const marker = path.join(ws.home, 'notified.json');
    userHooks(ws.home, { Notification: cmd(`cat > ${marker}`) });
    expect((await runKeel(['-p', 'go'], { cwd: ws.dir, env })).code).toBe(0);
    expect(JSON.parse(readFileSync(marker, 'utf8'))).toMatchObject({ hook_event_name: 'Notification', message: 'Keel needs your permission to use write_file' });
  });
});
