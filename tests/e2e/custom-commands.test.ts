/** Custom slash commands (Claude Code's `.claude/commands/*.md`) through the built CLI. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { plainMessages, say } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();

async function project(script = [say('done')]) {
  const p = await prepare(script);
  const home = path.join(path.dirname(p.ws.dir), 'fake-home');
  mkdirSync(home, { recursive: true });
  return { ...p, home, env: { ...p.env, HOME: home } };
}

const firstPrompt = (server: { messageRequests(): Array<{ body: { messages: Array<{ role: string; content: unknown }> } }> }) =>
  String(plainMessages(server.messageRequests()[0]!.body.messages)[0]!.content);

describe('custom slash commands', () => {
  it('keel -p "/greet Bob" sends the expanded prompt and prints the answer', async () => {
    const { env, ws, server } = await project([say('Hello, Bob!')]);
    ws.write('.claude/commands/greet.md', '---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS, warmly.\n');
    const run = await runKeel(['-p', '/greet Bob'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run).toMatchObject({ code: 0, stdout: 'Hello, Bob!\n' });
    expect(firstPrompt(server)).toBe('Say hello to Bob, warmly.');
  });

  it('a sub-folder namespaces a command; $1 and $2 are its words; a file without $ARGUMENTS gets them appended', async () => {
    const { env, ws, server } = await project([say('made'), say('reviewed')]);
    ws.write('.claude/commands/frontend/component.md', 'Create a React component named $1 in $2.\n');
    // (`/review` is Keel's own command, which a custom command does not shadow.)
    ws.write('.keel/commands/audit.md', 'Review the current diff.\n');
    const made = await runKeel(['-p', '/frontend:component Button "src/ui kit"'], { cwd: ws.dir, env });
    expect(made).toMatchObject({ code: 0, stdout: 'made\n' });
    expect(firstPrompt(server)).toBe('Create a React component named Button in src/ui kit.');
    const reviewed = await runKeel(['-p', '/audit focus on tests'], { cwd: ws.dir, env });
    expect(reviewed).toMatchObject({ code: 0, stdout: 'reviewed\n' });
    expect(String(plainMessages(server.messageRequests()[1]!.body.messages)[0]!.content)).toBe('Review the current diff.\n\nARGUMENTS: focus on tests');
  });

  it("a user's command from ~/.claude/commands and $KEEL_HOME/commands; a trusted project's wins a clash (untrusted, yours does: adversarial/project-files)", async () => {
    const { env, ws, server, home } = await project([say('one'), say('two')]);
    mkdirSync(path.join(home, '.claude', 'commands'), { recursive: true });
    writeFileSync(path.join(home, '.claude', 'commands', 'standup.md'), 'Summarise my work for standup.\n');
    mkdirSync(path.join(ws.home, 'commands'), { recursive: true });
    writeFileSync(path.join(ws.home, 'commands', 'greet.md'), 'USER GREETING\n');
    ws.write('.claude/commands/greet.md', 'PROJECT GREETING\n');
    expect((await runKeel(['-p', '/standup'], { cwd: ws.dir, env })).code).toBe(0);
    expect(firstPrompt(server)).toBe('Summarise my work for standup.');
    expect((await runKeel(['-p', '/greet', '--trust'], { cwd: ws.dir, env })).code).toBe(0);
    expect(String(plainMessages(server.messageRequests()[1]!.body.messages)[0]!.content)).toBe('PROJECT GREETING');
  });

  it('/help lists a custom command with its argument hint and where it comes from', async () => {
    const { env, ws, server } = await project([]);
    ws.write('.claude/commands/greet.md', '---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS.\n');
    ws.write('.claude/commands/frontend/component.md', '---\ndescription: Make a component\nargument-hint: "[name] [folder]"\n---\nMake $1.\n');
    const run = await runKeel(['-p', '/help'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}\/greet\s+<name> — Greet someone \(project\)$/m);
    expect(run.stdout).toMatch(/^ {2}\/frontend:component\s+\[name\] \[folder\] — Make a component \(project\)$/m);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('@path includes a project file; @../../canary outside the workspace is refused and nothing is sent', async () => {
    const { env, ws, server } = await project([say('read it')]);
    ws.write('notes.txt', 'NOTES-CONTENT-123\n');
    ws.write('.claude/commands/explain.md', 'Explain @notes.txt to me. Ping @someone too.\n');
    const run = await runKeel(['-p', '/explain'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'read it\n' });
    const sent = firstPrompt(server);
    expect(sent).toContain('Explain @notes.txt to me. Ping @someone too.');
    expect(sent).toContain('Contents of notes.txt:\n```\nNOTES-CONTENT-123\n```');

    // A canary two levels above the project (outside the workspace): a command naming it gets nothing.
    const canary = path.join(path.dirname(path.dirname(ws.dir)), `keel-canary-${path.basename(path.dirname(ws.dir))}`);
    writeFileSync(canary, 'CANARY-OUTSIDE-COMMAND-77\n');
    try {
      ws.write('.claude/commands/steal.md', `Summarise @../../${path.basename(canary)}\n`);
      const stolen = await runKeel(['-p', '/steal'], { cwd: ws.dir, env });
      expect(stolen.code).toBe(1);
      expect(stolen.stderr).toMatch(/^keel: \/steal: @\.\.\/\.\.\/keel-canary-\S+ is not included: .*\n$/);
      expect(server.messageRequests()).toHaveLength(1);
      expect(JSON.stringify(server.messageRequests().map((r) => r.body))).not.toContain('CANARY-OUTSIDE-COMMAND-77');
    } finally {
      if (existsSync(canary)) (await import('node:fs')).rmSync(canary);
    }
  });

  it("!`command` in a trusted project runs through the policy: allowed by the command's allowed-tools, else refused headless", async () => {
    const { env, ws, server } = await project([say('seen')]);
    ws.write('.claude/commands/health.md', '---\nallowed-tools: Bash(echo:*)\n---\nThe status is: !`echo all-green`\n');
    ws.write('.claude/commands/unasked.md', 'Files: !`ls -a`\n');
    const run = await runKeel(['-p', '/health', '--trust'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run).toMatchObject({ code: 0, stdout: 'seen\n' });
    expect(firstPrompt(server)).toBe('The status is: all-green');
    // No rule allows `ls -a` and a headless run cannot ask: the command stops before anything is sent.
    const refused = await runKeel(['-p', '/unasked', '--trust', '--permission-mode', 'ask'], { cwd: ws.dir, env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^keel: \/unasked: !`ls -a` did not run: /);
    expect(server.messageRequests()).toHaveLength(1);
  });

  it('a bad front matter is one warning naming the file and field; the other commands still load', async () => {
    const { env, ws, server } = await project([say('hi')]);
    ws.write('.claude/commands/bad.md', '---\ndisable-model-invocation: sometimes\n---\nBad.\n');
    ws.write('.claude/commands/good.md', 'Good.\n');
    const run = await runKeel(['-p', '/good'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(new RegExp(`^keel: warn: command not loaded: ${ws.path('.claude/commands/bad.md').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: field "disable-model-invocation": .*\\n$`));
    expect(firstPrompt(server)).toBe('Good.');
  });
});

describe('front matter that changes the run', () => {
  it("model: the command's turn uses it, the next run does not", async () => {
    const { env, ws, server } = await project([say('quick'), say('normal')]);
    ws.write('.claude/commands/quick.md', '---\nmodel: claude-haiku-for-commands\n---\nBe quick.\n');
    expect((await runKeel(['-p', '/quick'], { cwd: ws.dir, env })).code).toBe(0);
    expect((await runKeel(['-p', 'hi'], { cwd: ws.dir, env })).code).toBe(0);
    expect(server.messageRequests().map((r) => r.body.model)).toEqual(['claude-haiku-for-commands', expect.not.stringMatching(/haiku-for-commands/)]);
  });

  it("an untrusted project's allowed-tools: one warning on stderr, nothing granted, the answer alone on stdout", async () => {
    const { env, ws, server } = await project([say('plain answer')]);
    ws.write('.claude/commands/tidy.md', '---\nallowed-tools: Bash(*)\n---\nTidy up.\n');
    const run = await runKeel(['-p', '/tidy'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'plain answer\n' });
    expect(run.stderr).toBe(`keel: warn: /tidy: ${ws.path('.claude/commands/tidy.md')} is in a project that is not trusted, so its allowed-tools are ignored\n`);
    expect(firstPrompt(server)).toBe('Tidy up.');
  });
});

describe('keel doctor', () => {
  it('names a command file a built-in command shadows, a clash, and a bad file', async () => {
    const { env, ws } = await project([]);
    ws.write('.claude/commands/status.md', 'mine');
    ws.write('.claude/commands/greet.md', 'project');
    ws.write('.keel/commands/greet.md', 'also project');
    ws.write('.claude/commands/broken.md', '---\nmodel: [1]\n---\nx');
    const run = await runKeel(['doctor'], { cwd: ws.dir, env });
    expect(run.stdout).toContain(`/status (${ws.path('.claude/commands/status.md')}) is a built-in command's name`);
    expect(run.stdout).toContain(`/greet: ${ws.path('.keel/commands/greet.md')} is shadowed by ${ws.path('.claude/commands/greet.md')}`);
    expect(run.stdout).toContain(`${ws.path('.claude/commands/broken.md')}: field "model"`);
  });
});
