import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Answer, type Kernel } from '../../../kernel/index.js';
import customCommands, { loadCommands } from '../../../plugins/custom-commands/index.js';
import { findCommandFiles } from '../../../plugins/custom-commands/discover.js';
import { expandCommand, fillArguments, fillShellArguments, splitArguments } from '../../../plugins/custom-commands/expand.js';
import instructions from '../../../plugins/instructions/index.js';
import permissions from '../../../plugins/permissions/index.js';
import skills from '../../../plugins/skills/index.js';
import toolBash from '../../../plugins/tool-bash/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace;
let home: string;
const savedHome = process.env.HOME;

beforeEach(() => {
  ws = makeWorkspace({ git: true });
  home = path.join(path.dirname(ws.dir), 'fake-home');
  mkdirSync(home, { recursive: true });
  process.env.HOME = home;
});
afterEach(() => {
  process.env.HOME = savedHome;
  ws.cleanup();
});

function kernelFor(opts: { trusted?: boolean; answer?: Answer['kind'] extends never ? never : 'allow_once' | 'deny'; allow?: string[] } = {}): { kernel: Kernel; asked: string[] } {
  const asked: string[] = [];
  const answerer = {
    name: 'answerer',
    kernel: '^1.0.0',
    apply(kernel: Kernel) {
      kernel.hooks.askUser.tapPromise('answerer', async (question) => {
        if (question.kind === 'permission') asked.push(`${question.call.name} ${JSON.stringify(question.call.input)}`);
        return { kind: 'permission', choice: opts.answer ?? 'deny' };
      });
    },
  };
  const kernel = testKernel([instructions(), permissions(), toolsFs(), toolBash(), skills(), customCommands(), answerer], {
    keelHome: ws.home,
    cwd: ws.dir,
    projectRoot: ws.dir,
    trusted: opts.trusted ?? true,
    permissions: { allow: opts.allow ?? [], ask: [], deny: [] },
  });
  return { kernel, asked };
}

describe('finding command files', () => {
  it('names commands by their path, namespaced by folder, project before user; a bad name is an error line', () => {
    ws.write('.claude/commands/greet.md', 'hi');
    ws.write('.claude/commands/frontend/component.md', 'c');
    ws.write('.keel/commands/Deploy.md', 'd');
    ws.write('.claude/commands/notes.txt', 'not a command');
    ws.write('.claude/commands/bad name.md', 'x');
    mkdirSync(path.join(home, '.claude', 'commands'), { recursive: true });
    writeFileSync(path.join(home, '.claude', 'commands', 'greet.md'), 'user');
    const { files, errors } = findCommandFiles({ projectRoot: ws.dir, keelHome: ws.home });
    expect(files.map((f) => [f.name, f.origin])).toEqual([
      ['frontend:component', 'project'],
      ['greet', 'project'],
      ['deploy', 'project'],
      ['greet', 'user'],
    ]);
    expect(errors).toEqual([`${ws.path('.claude/commands/bad name.md')}: "bad name" cannot be part of a command name (letters, digits, _ and - only)`]);
  });

  it("takes argument-hint as written, as Claude Code's docs write it", async () => {
    ws.write('.claude/commands/a.md', '---\nargument-hint: [pr-number] [priority] [assignee]\ndescription: Fix an issue\n---\nFix $1');
    ws.write('.claude/commands/b.md', '---\nargument-hint: "<name>"\n---\nHi');
    const { commands, errors } = await loadCommands(kernelFor().kernel, ws.dir);
    expect(errors).toEqual([]);
    expect(commands.map((c) => c.hint)).toEqual(['[pr-number] [priority] [assignee]', '<name>']);
  });

  it('reads the front matter; a bad field is one line naming the file and field, and the rest load', async () => {
    ws.write('.claude/commands/ok.md', '---\ndescription: Does it\nargument-hint: [file]\nallowed-tools: [Read, "Bash(git diff:*)"]\nmodel: claude-haiku-5-5\ndisable-model-invocation: true\n---\nBody $1\n');
    ws.write('.claude/commands/bad.md', '---\nmodel: 7\n---\nBody\n');
    ws.write('.claude/commands/plain.md', '\nFirst line is the description.\nMore.\n');
    const { kernel } = kernelFor();
    const { commands, errors } = await loadCommands(kernel, ws.dir);
    expect(commands.map((c) => [c.name, c.description, c.hint, c.allowedTools, c.model])).toEqual([
      ['ok', 'Does it', '[file]', ['Read', 'Bash(git diff:*)'], 'claude-haiku-5-5'],
      ['plain', 'First line is the description.', undefined, [], undefined],
    ]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(new RegExp(`^${ws.path('.claude/commands/bad.md').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: field "model": `));
  });
});

describe('reading command files through the skills plugin', () => {
  it('a kernel without the skills plugin does not start, naming the dependency', () => {
    expect(() => testKernel([customCommands()], { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir })).toThrow(/custom-commands.*depends on "skills"/);
  });

  it('a command file that cannot be read is one line naming it, and the rest load', async () => {
    ws.write('.claude/commands/ok.md', 'Hi');
    symlinkSync(ws.path('nowhere.md'), ws.path('.claude/commands/gone.md'));
    const { commands, errors } = await loadCommands(kernelFor().kernel, ws.dir);
    expect(commands.map((c) => c.name)).toEqual(['ok']);
    expect(errors).toEqual([`${ws.path('.claude/commands/gone.md')}: cannot be read: ENOENT`]);
  });
});

describe('expansion', () => {
  it('splits arguments like a shell and fills $ARGUMENTS and $1…$9', () => {
    expect(splitArguments(`one "two words" 'three' four\\ five`)).toEqual(['one', 'two words', 'three', 'four five']);
    expect(fillArguments('[$ARGUMENTS] $1/$2/$3/$9', 'a "b c"')).toBe('[a "b c"] a/b c//');
  });

  async function expand(body: string, args: string, opts: Parameters<typeof kernelFor>[0] & { mayRun?: boolean } = {}) {
    const { kernel, asked } = kernelFor(opts);
    const session = await testSession(kernel);
    const text = await expandCommand(body, args, { kernel, session, signal: new AbortController().signal, name: 'cmd', file: '/x/cmd.md', mayRun: opts.mayRun ?? true });
    return { text, asked };
  }

  it('runs !`command` through the policy: allowed by a rule it runs, else the user is asked, and a refusal stops the command', async () => {
    expect((await expand('Branch: !`echo main`', '', { allow: ['bash(echo:*)'] })).text).toBe('Branch: main');
    const asked = await expand('Branch: !`echo asked`', '', { answer: 'allow_once' });
    expect(asked.text).toBe('Branch: asked');
    expect(asked.asked).toEqual(['bash {"command":"echo asked"}']);
    await expect(expand('Files: !`ls`', '')).rejects.toThrow(/^\/cmd: !`ls` did not run: /);
  });

  it('puts each argument into a !`command` as one quoted word: shell syntax in an argument is text, $ARGUMENTS still gives several words', async () => {
    expect(fillShellArguments('git log $ARGUMENTS -- $1 $2 $3', `--oneline "it's" `)).toBe(`git log '--oneline' 'it'\\''s' -- '--oneline' 'it'\\''s' `);
    // An empty word given is an empty argument; one not given is none.
    expect(fillShellArguments('ls $1 $2', `""`)).toBe(`ls '' `);
    expect((await expand('Log: !`echo [$1]`', '', { allow: ['bash(echo:*)'] })).text).toBe('Log: []');
    const canaries = mkdtempSync(path.join(tmpdir(), 'keel-canary-'));
    try {
      const canary = path.join(canaries, 'ran');
      // A rule that allows `echo …`: were the arguments spliced in raw, the policy would see `echo a; touch …` and the
      // `$(touch …)`; quoted, the whole line is one echo of literal words.
      const args = `a; touch ${canary} $(touch ${canary}) \`touch ${canary}\` *`;
      const { text, asked } = await expand('Echo: !`echo $ARGUMENTS` / !`echo [$1]`', args, { allow: ['bash(echo:*)'] });
      expect(asked).toEqual([]);
      expect(text).toBe(`Echo: a; touch ${canary} $(touch ${canary}) \`touch ${canary}\` * / [a;]`);
      expect(existsSync(canary)).toBe(false);
    } finally {
      rmSync(canaries, { recursive: true, force: true });
    }
  });

  it('never runs !`command` when it may not (an untrusted project), whatever the rules', async () => {
    await expect(expand('x !`echo nope`', '', { allow: ['bash'], mayRun: false })).rejects.toThrow('/cmd: /x/cmd.md is in a project that is not trusted, so its !`…` commands do not run (keel trust makes it trusted)');
  });

  it('arguments and command output are inserted as they are, never expanded again', async () => {
    ws.write('payload.txt', 'PAYLOAD !`touch x` @notes.txt $1');
    ws.write('notes.txt', 'NOTES');
    const { text, asked } = await expand('Say $ARGUMENTS and !`cat payload.txt`', '!`echo injected` $1', { allow: ['bash(cat:*)'] });
    expect(asked).toEqual([]);
    expect(text).toBe('Say !`echo injected` $1 and PAYLOAD !`touch x` @notes.txt $1');
  });

  it('@path includes a readable file, leaves a word that names no file, and refuses a path the policy refuses', async () => {
    ws.write('src/a.ts', 'export const a = 1;\n');
    const { text } = await expand('Look at @src/a.ts, and thank @maintainer.', '');
    expect(text).toBe('Look at @src/a.ts, and thank @maintainer.\n\nContents of src/a.ts:\n```\nexport const a = 1;\n```');
    const outside = path.join(path.dirname(ws.dir), 'outside.txt');
    writeFileSync(outside, 'OUTSIDE');
    await expect(expand('Read @../outside.txt', '')).rejects.toThrow(/^\/cmd: @\.\.\/outside\.txt is not included: /);
    ws.write('.env', 'SECRET=1');
    await expect(expand('Read @.env', '')).rejects.toThrow(/^\/cmd: @\.env is not included: /);
  });

  it('an @path in the arguments stays text, even when the user would allow the read; the file\'s own @path is still included; @server:uri is left to MCP', async () => {
    ws.write('b.md', 'INSIDE-B');
    const canary = path.join(path.dirname(ws.dir), 'outside-canary.txt');
    writeFileSync(canary, 'CANARY-OUTSIDE-ARGUMENT');
    // allow_once: a policy that would let the read through, so only the order keeps the canary out.
    const { text, asked } = await expand('Review $ARGUMENTS and @docs:readme', `@b.md @${canary}`, { answer: 'allow_once' });
    expect(text).toBe(`Review @b.md @${canary} and @docs:readme`);
    expect(asked).toEqual([]);
    const words = await expand('First $1, then $2', `@b.md @${canary}`, { answer: 'allow_once' });
    expect(words.text).toBe(`First @b.md, then @${canary}`);
    expect(words.asked).toEqual([]);
    // An include whose path is an argument (`@$1`) is no include either: the argument is text after the @.
    const chosen = await expand('Look at @$1 and @b.md', canary, { answer: 'allow_once' });
    expect(chosen.text).toBe(`Look at @${canary} and @b.md\n\nContents of b.md:\n\`\`\`\nINSIDE-B\n\`\`\``);
    expect(chosen.text).not.toContain('CANARY-OUTSIDE-ARGUMENT');
    expect(chosen.asked).toEqual([]);
  });

  it('the file\'s own @path between !`command`s is included after its part, with the arguments filled in around it', async () => {
    ws.write('b.md', 'INSIDE-B');
    const { text } = await expand('See @b.md for $1. !`echo out` Then $2.', 'X @b.md', { allow: ['bash(echo:*)'] });
    expect(text).toBe('See @b.md for X.\n\nContents of b.md:\n```\nINSIDE-B\n```\n\nout Then @b.md.');
  });
});

describe('the commands', () => {
  it('are attached at session start with their hint in the description; a built-in name keeps its command', async () => {
    ws.write('.claude/commands/greet.md', '---\ndescription: Greet\nargument-hint: <name>\n---\nHi $1');
    ws.write('.claude/commands/permissions.md', 'shadowed');
    const { kernel } = kernelFor();
    await testSession(kernel);
    expect(kernel.commands.get('greet')?.description).toBe('<name> — Greet (project)');
    expect(kernel.commands.ownerOf('permissions')).toBe('permissions');
    // A second session (the UI's /clear) attaches them again, without clashing with itself.
    await testSession(kernel);
    expect(kernel.commands.ownerOf('greet')).toBe('custom-commands');
  });
});
