/** Claude Code's everyday commands through the built CLI: /help lists them all; /export, /context, /review, /init, /agents, /todos, /hooks. */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, plainMessages, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();
let outside: string | undefined;
afterEach(() => {
  if (outside) rmSync(outside, { recursive: true, force: true });
  outside = undefined;
});

/** The text of the last user message of a request. */
function lastUserText(s: ScriptedServer, i: number): string {
  const messages = plainMessages(s.messageRequests()[i]!.body.messages);
  const content = messages.filter((m) => m.role === 'user').at(-1)!.content;
  return typeof content === 'string' ? content : (content as Array<{ type: string; text?: string }>).map((b) => b.text ?? '').join('');
}

function gitRepo(dir: string): (...args: string[]) => string {
  rmSync(path.join(dir, '.git'), { recursive: true, force: true });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=T', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, encoding: 'utf8' });
  git('init', '-q');
  return git;
}

const EVERY_COMMAND = ['add-dir', 'agents', 'bashes', 'compact', 'config', 'context', 'cost', 'doctor', 'export', 'goal', 'help', 'hooks', 'init', 'login', 'mcp', 'memory', 'model', 'output-style', 'permissions', 'plan', 'review', 'rewind', 'sessions', 'skills', 'status', 'todos'];

describe("Claude Code's everyday commands", () => {
  it('/help lists every command, each with a description', async () => {
    const { env, ws, server } = await prepare([]);
    const run = await runKeel(['-p', '/help'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const listed = [...run.stdout.matchAll(/^ {2}\/([\w:-]+)\s{2,}\S/gm)].map((m) => m[1]);
    expect(listed).toEqual(EVERY_COMMAND);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('/export writes the conversation as Markdown (tool calls and results fenced) and never over an existing file', async () => {
    const { env, ws } = await prepare([callTool('bash', { command: "printf '%s\\n' '```fenced```'" }, 'b1'), say('Done: it printed a fence.')]);
    expect((await runKeel(['-p', 'print a fence', '--permission-mode', 'auto'], { cwd: ws.dir, env })).code).toBe(0);
    const run = await runKeel(['-p', '/export notes/chat.md', '--continue'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^Exported 4 messages to .*notes\/chat\.md$/m);
    const markdown = readFileSync(ws.path('notes/chat.md'), 'utf8');
    expect(markdown).toMatch(/^# Keel session [\w-]+\n/);
    expect(markdown).toContain('## User\n\nprint a fence');
    expect(markdown).toContain('**Tool call: bash**');
    // The result holds three backticks, so its fence is four long.
    expect(markdown).toMatch(/\*\*Result\*\*\n\n````\n```fenced```\n````/);
    expect(markdown).toContain('## Assistant\n\nDone: it printed a fence.');
    const again = await runKeel(['-p', '/export notes/chat.md', '--continue'], { cwd: ws.dir, env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^keel: \/export: .*notes\/chat\.md already exists; name another file\n$/);
    expect(readFileSync(ws.path('notes/chat.md'), 'utf8')).toBe(markdown);
    const printed = await runKeel(['-p', '/export', '--continue'], { cwd: ws.dir, env });
    expect(printed.stdout).toContain('## Assistant\n\nDone: it printed a fence.');
  });

  it('/context prints a bar and the tokens of each part of the context', async () => {
    const { env, ws, server } = await prepare([]);
    ws.write('AGENTS.md', `# Rules\n${'Always write tests. '.repeat(200)}\n`);
    const run = await runKeel(['-p', '/context', '--trust'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^Context: about [\d.]+k? of 200k tokens \([\d.]+%\)$/m);
    expect(run.stdout).toMatch(/^\[[█▓▒▚▞▙▛▜·]{50}\]$/m);
    const tokens = (label: string) => Number(new RegExp(`^ {2}. ${label}\\s+(\\d+) tokens`, 'm').exec(run.stdout)?.[1]);
    expect(tokens('System prompt')).toBeGreaterThan(50);
    expect(tokens('Tools')).toBeGreaterThan(500);
    // AGENTS.md: about 4,000 characters, so about 1,000 tokens.
    expect(tokens('Memory files')).toBeGreaterThan(900);
    expect(tokens('Free space')).toBeGreaterThan(100_000);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('/review with -p sends a review prompt holding the diff and the untracked files, and prints the review', async () => {
    const { env, ws, server } = await prepare([say('LGTM apart from the off-by-one.')]);
    const git = gitRepo(ws.dir);
    ws.write('src/count.js', 'export const last = (xs) => xs[xs.length];\n');
    git('add', '.');
    git('commit', '-qm', 'first');
    ws.write('src/count.js', 'export const last = (xs) => xs[xs.length - 2];\n');
    ws.write('src/new.js', 'export const x = 1;\n');
    const run = await runKeel(['-p', '/review check the indexing'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'LGTM apart from the off-by-one.\n' });
    const prompt = lastUserText(server, 0);
    expect(prompt).toContain('Act as a careful senior reviewer');
    expect(prompt).toContain('-export const last = (xs) => xs[xs.length];');
    expect(prompt).toContain('+export const last = (xs) => xs[xs.length - 2];');
    expect(prompt).toContain('The user asks you to focus on: check the indexing');
    expect(prompt).toContain('New files not yet tracked by git (read them too): src/new.js');
  });

  it("/review never runs a repository's own diff drivers or clean filters (canary outside the workspace)", async () => {
    const { env, ws, server } = await prepare([say('reviewed')]);
    outside = mkdtempSync(path.join(os.tmpdir(), 'keel-canary-'));
    const canary = path.join(outside, 'ran');
    const git = gitRepo(ws.dir);
    ws.write('a.txt', 'one\n');
    git('add', '.');
    git('commit', '-qm', 'first');
    ws.write('.gitattributes', '*.txt filter=evil diff=evil\n');
    git('config', 'filter.evil.clean', `sh -c 'touch ${canary}; cat'`);
    git('config', 'diff.evil.textconv', `sh -c 'touch ${canary}; cat "$0"'`);
    git('config', 'diff.evil.command', `sh -c 'touch ${canary}'`);
    git('config', 'diff.external', `sh -c 'touch ${canary}'`);
    git('config', 'core.fsmonitor', `sh -c 'touch ${canary}'`);
    ws.write('a.txt', 'two\n');
    const run = await runKeel(['-p', '/review'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'reviewed\n' });
    expect(lastUserText(server, 0)).toContain('+two');
    expect(existsSync(canary)).toBe(false);
  });

  it('/review outside git, or with nothing changed, is one line saying why; the model is not called', async () => {
    const { env, ws, server } = await prepare([]);
    rmSync(ws.path('.git'), { recursive: true, force: true });
    const bare = await runKeel(['-p', '/review'], { cwd: ws.dir, env });
    expect(bare.code).toBe(1);
    expect(bare.stderr).toMatch(/^keel: \/review: .* is not in a git work tree; \/review reviews git changes \(or name a PR number\)\n$/);
    const git = gitRepo(ws.dir);
    ws.write('a.txt', 'one\n');
    git('add', '.');
    git('commit', '-qm', 'first');
    const clean = await runKeel(['-p', '/review'], { cwd: ws.dir, env });
    expect(clean.stderr).toBe('keel: /review: nothing to review: the work tree has no changes against HEAD (name a PR number to review one)\n');
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('/init has the model survey the project and write AGENTS.md through the permission-checked tools', async () => {
    const write = (id: string) => callTool('write_file', { path: 'AGENTS.md', content: '# Project\nRun `npm test`.\n' }, id);
    const { env, ws, server } = await prepare([write('w1'), say('Wrote AGENTS.md.'), write('w2'), say('Wrote it.')]);
    ws.write('package.json', JSON.stringify({ name: 'demo', scripts: { test: 'vitest' } }));
    // Headless in ask mode nobody can approve the write: it is refused, and nothing is written.
    const refused = await runKeel(['-p', '/init'], { cwd: ws.dir, env });
    expect(refused.code).toBe(0);
    expect(existsSync(ws.path('AGENTS.md'))).toBe(false);
    const prompt = lastUserText(server, 0);
    expect(prompt).toContain('Survey this repository and write an AGENTS.md at the project root');
    expect(prompt).toContain('- Test: `npm test`');
    // Where edits are allowed, the same write goes through.
    const allowed = await runKeel(['-p', '/init', '--permission-mode', 'edits'], { cwd: ws.dir, env });
    expect(allowed).toMatchObject({ code: 0, stdout: 'Wrote it.\n' });
    expect(readFileSync(ws.path('AGENTS.md'), 'utf8')).toBe('# Project\nRun `npm test`.\n');
  });

  it('/agents create has the model write the prompt and saves .claude/agents/<name>.md; list and show read it back', async () => {
    const { env, ws, server } = await prepare([say('You review SQL migrations for locking problems.')]);
    const created = await runKeel(['--trust', '-p', '/agents create sql-reviewer reviews SQL migrations'], { cwd: ws.dir, env });
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const file = ws.path('.claude/agents/sql-reviewer.md');
    expect(readFileSync(file, 'utf8')).toBe('---\nname: sql-reviewer\ndescription: "reviews SQL migrations"\n---\nYou review SQL migrations for locking problems.\n');
    expect(JSON.stringify(server.messageRequests()[0]!.body.messages)).toContain('What it does: reviews SQL migrations');
    const list = await runKeel(['--trust', '-p', '/agents'], { cwd: ws.dir, env });
    expect(list.stdout).toMatch(/^ {2}sql-reviewer\s+reviews SQL migrations/m);
    const show = await runKeel(['--trust', '-p', '/agents show sql-reviewer'], { cwd: ws.dir, env });
    expect(show.stdout).toContain('You review SQL migrations for locking problems.');
    const again = await runKeel(['--trust', '-p', '/agents create sql-reviewer again'], { cwd: ws.dir, env });
    expect(again.code).toBe(1);
    // The name is checked before the model is asked: no request, the file as it was.
    expect(again.stderr).toBe(`keel: /agents: ${file} already exists; edit it, or pick another name\n`);
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('/todos, /hooks and /config answer without the model', async () => {
    const { env, ws, server } = await prepare([]);
    ws.write('.claude/settings.json', JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo checked' }] }] } }));
    const todos = await runKeel(['-p', '/todos'], { cwd: ws.dir, env });
    expect(todos.stdout).toMatch(/^No tasks/);
    const hooks = await runKeel(['-p', '/hooks', '--trust'], { cwd: ws.dir, env });
    expect(hooks.stdout).toContain(`User hooks (from ${ws.path('.claude/settings.json')}):`);
    expect(hooks.stdout).toMatch(/^ {2}PreToolUse\n {4}Bash: echo checked$/m);
    const untrusted = await runKeel(['-p', '/hooks'], { cwd: ws.dir, env });
    expect(untrusted.stdout).toContain('No user hooks are in force.');
    expect(untrusted.stdout).toContain(`Not loaded (the project is not trusted): ${ws.path('.claude/settings.json')}`);
    const config = await runKeel(['-p', '/config'], { cwd: ws.dir, env });
    expect(config.stdout).toMatch(/^model = "claude-sonnet-5-5"/m);
    expect(server.messageRequests()).toHaveLength(0);
  });
});
