import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auxiliaryTurn, definePlugin, type Kernel, type Session, type ToolDefinition } from '../../../kernel/index.js';
import instructions from '../../../plugins/instructions/index.js';
import permissions from '../../../plugins/permissions/index.js';
import skills from '../../../plugins/skills/index.js';
import toolBash from '../../../plugins/tool-bash/index.js';
import { loadCatalog, type Skill } from '../../../plugins/skills/catalog.js';
import { SECTION_BUDGET, skillsSection } from '../../../plugins/skills/listing.js';
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

function skillAt(root: string, folder: string, front: string, body = 'Do the thing.'): string {
  const dir = path.join(root, folder);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'SKILL.md'), `---\n${front}\n---\n${body}\n`);
  return dir;
}

function kernelFor(trusted = true): Kernel {
  return testKernel([instructions(), permissions(), toolBash(), skills()], { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir, trusted });
}

async function call(kernel: Kernel, session: Session, name: string, input: unknown) {
  const tool = kernel.tools.get(name) as ToolDefinition;
  const turn = auxiliaryTurn(kernel, session);
  return tool.execute(tool.input.parse(input), { signal: turn.signal, session, turn, call: { id: 't1', name, input }, kernel, cwd: session.cwd, emit: () => {} });
}

describe('loading SKILL.md files', () => {
  it('finds project, user and $KEEL_HOME skills in precedence order, and keeps clashes for /skills and doctor', async () => {
    skillAt(ws.path('.claude/skills'), 'a', 'name: shared\ndescription: from .claude');
    skillAt(ws.path('.agents/skills'), 'b', 'name: shared\ndescription: from .agents');
    skillAt(ws.path('.keel/skills'), 'c', 'name: keel-one\ndescription: from .keel');
    skillAt(path.join(home, '.claude', 'skills'), 'd', 'name: home-one\ndescription: from ~/.claude');
    skillAt(path.join(ws.home, 'skills'), 'e', 'name: keel-home-one\ndescription: from KEEL_HOME');
    const catalog = await loadCatalog(kernelFor(), { cwd: ws.dir, projectRoot: ws.dir });
    expect(catalog.skills.map((s) => [s.name, s.description, s.origin])).toEqual([
      ['shared', 'from .claude', 'project'],
      ['keel-one', 'from .keel', 'project'],
      ['home-one', 'from ~/.claude', 'user'],
      ['keel-home-one', 'from KEEL_HOME', 'user'],
    ]);
    expect(catalog.clashes).toEqual([`shared: ${ws.path('.agents/skills/b/SKILL.md')} is shadowed by ${ws.path('.claude/skills/a/SKILL.md')}`]);
  });

  it('a bad SKILL.md is one line naming the file and the field; the others load', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['no-front', '', /no front matter/],
      ['bad-yaml', 'name: [unclosed\ndescription: x', /front matter is not valid YAML/],
      ['no-desc', 'name: no-desc', /field "description": /],
      ['bad-name', 'name: Bad_Name\ndescription: x', /field "name": lowercase letters/],
      ['long-name', `name: ${'a'.repeat(65)}\ndescription: x`, /field "name": at most 64 characters/],
      ['bad-tools', 'name: bad-tools\ndescription: x\nallowed-tools: 3', /field "allowed-tools": /],
      ['bad-meta', 'name: bad-meta\ndescription: x\nmetadata: [1, 2]', /field "metadata": /],
      ['empty-desc', "name: empty-desc\ndescription: ''", /field "description": must not be empty/],
      ['long-desc', `name: long-desc\ndescription: ${'d'.repeat(1025)}`, /field "description": at most 1024 characters/],
    ];
    for (const [folder, front] of cases) {
      const dir = path.join(ws.path('.claude/skills'), folder);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'SKILL.md'), front ? `---\n${front}\n---\nbody\n` : 'just a body\n');
    }
    skillAt(ws.path('.claude/skills'), 'good', 'name: good\ndescription: fine\nallowed-tools: Read, Grep Bash(git status:*)\nlicense: MIT\nmetadata:\n  version: 1');
    const catalog = await loadCatalog(kernelFor(), { cwd: ws.dir, projectRoot: ws.dir });
    expect(catalog.skills.map((s) => s.name)).toEqual(['good']);
    expect(catalog.skills[0]!.allowedTools).toEqual(['Read', 'Grep', 'Bash(git status:*)']);
    expect(catalog.errors).toHaveLength(cases.length);
    for (const [folder, , pattern] of cases) {
      const line = catalog.errors.find((e) => e.startsWith(`${ws.path(`.claude/skills/${folder}/SKILL.md`)}: `));
      expect(line, folder).toMatch(pattern);
      expect(line).not.toContain('\n');
    }
  });

  it('reads the project folders from the working folder up to the project root, nearest first, and none above the root', async () => {
    const sub = path.join(ws.dir, 'packages', 'app');
    skillAt(path.join(sub, '.claude', 'skills'), 'near', 'name: shared\ndescription: from the working folder');
    skillAt(ws.path('.claude/skills'), 'root', 'name: shared\ndescription: from the root');
    skillAt(ws.path('.agents/skills'), 'only-root', 'name: root-only\ndescription: only at the root');
    skillAt(path.join(path.dirname(ws.dir), '.claude', 'skills'), 'above', 'name: above-root\ndescription: above the project');
    const catalog = await loadCatalog(kernelFor(), { cwd: sub, projectRoot: ws.dir });
    expect(catalog.skills.map((s) => [s.name, s.description])).toEqual([
      ['shared', 'from the working folder'],
      ['root-only', 'only at the root'],
    ]);
    expect(catalog.clashes).toEqual([`shared: ${ws.path('.claude/skills/root/SKILL.md')} is shadowed by ${path.join(sub, '.claude', 'skills', 'near', 'SKILL.md')}`]);
  });

  it("a plugin's skills (service skills:<plugin>, a folder of skills or one skill folder) come after yours, grant their allowed-tools, and keep their names in an untrusted project", async () => {
    const shipped = path.join(path.dirname(ws.dir), 'plugin-skills');
    skillAt(shipped, 'lint', 'name: lint\ndescription: the plugin lint\nallowed-tools: Bash(eslint:*)');
    const single = skillAt(path.join(path.dirname(ws.dir), 'single'), 'fmt', 'name: fmt\ndescription: the plugin formatter');
    skillAt(path.join(home, '.claude', 'skills'), 'mine', 'name: mine\ndescription: yours');
    skillAt(ws.path('.claude/skills'), 'lint', 'name: lint\ndescription: the project lint');
    const shipper = definePlugin(() => ({
      name: 'my-plugin',
      kernel: '^1.0.0',
      apply(kernel) {
        kernel.services.provide('skills:my-plugin', { dirs: [shipped, single] });
      },
    }));
    const kernelWith = (trusted: boolean) => testKernel([instructions(), permissions(), toolBash(), skills(), shipper()], { keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir, trusted });
    const untrusted = await loadCatalog(kernelWith(false), { cwd: ws.dir, projectRoot: ws.dir });
    expect(untrusted.skills.map((s) => [s.name, s.description, s.where, s.honoured])).toEqual([
      ['mine', 'yours', '~/.claude/skills', true],
      ['lint', 'the plugin lint', 'plugin my-plugin', true],
      ['fmt', 'the plugin formatter', 'plugin my-plugin', true],
    ]);
    expect(untrusted.errors).toEqual([`${ws.path('.claude/skills/lint/SKILL.md')}: this project is not trusted, so your ${path.join(shipped, 'lint', 'SKILL.md')} keeps the name lint`]);
    const trusted = await loadCatalog(kernelWith(true), { cwd: ws.dir, projectRoot: ws.dir });
    expect(trusted.skills.map((s) => [s.name, s.where])).toEqual([['lint', '.claude/skills'], ['mine', '~/.claude/skills'], ['fmt', 'plugin my-plugin']]);
    expect(trusted.clashes).toEqual([`lint: ${path.join(shipped, 'lint', 'SKILL.md')} is shadowed by ${ws.path('.claude/skills/lint/SKILL.md')}`]);
  });

  it("an untrusted project's skills load with allowed-tools not honoured; the user's are honoured", async () => {
    skillAt(ws.path('.claude/skills'), 'p', 'name: proj\ndescription: x\nallowed-tools: Bash(*)');
    skillAt(path.join(home, '.claude', 'skills'), 'u', 'name: mine\ndescription: x\nallowed-tools: Bash(*)');
    const untrusted = await loadCatalog(kernelFor(false), { cwd: ws.dir, projectRoot: ws.dir });
    // Untrusted, yours are listed first (and keep a name both use).
    expect(untrusted.skills.map((s) => [s.name, s.honoured])).toEqual([['mine', true], ['proj', false]]);
    const trusted = await loadCatalog(kernelFor(true), { cwd: ws.dir, projectRoot: ws.dir });
    expect(trusted.skills.map((s) => s.honoured)).toEqual([true, true]);
  });
});

describe('the listing', () => {
  const make = (n: number, description: string): Skill[] =>
    Array.from({ length: n }, (_, i) => ({ name: `skill-number-${i}`, description, body: '', dir: '', file: '', origin: 'user', where: '', allowedTools: [], honoured: true }));

  it('keeps short descriptions whole and fits any number of skills in the budget', () => {
    expect(skillsSection(make(2, 'Short one.'))).toContain('- skill-number-1: Short one.');
    for (const n of [10, 100, 400, 5000]) {
      const section = skillsSection(make(n, 'x'.repeat(1000)))!;
      expect(Buffer.byteLength(section), String(n)).toBeLessThanOrEqual(SECTION_BUDGET);
    }
    expect(skillsSection(make(5000, 'y'))).toMatch(/\(\d+ more skills: the skill tool called with an unknown name lists every name\)$/);
    expect(skillsSection([])).toBeUndefined();
  });

  it('shortens long descriptions evenly, leaving the room short ones do not need to the long ones', () => {
    const skills = [...make(1, 'tiny'), ...make(60, 'z'.repeat(400))].map((s, i) => ({ ...s, name: `s${i}` }));
    const section = skillsSection(skills)!;
    expect(section).toContain('- s0: tiny\n');
    const lengths = section.split('\n').filter((l) => l.startsWith('- s') && l !== '- s0: tiny').map((l) => l.length);
    expect(Math.max(...lengths) - Math.min(...lengths)).toBeLessThanOrEqual(1);
    expect(section).toMatch(/z…$/m);
  });
});

describe('the skill tool', () => {
  it('returns the body with the folder named; an unknown name lists the skills; no skill tool without skills', async () => {
    const dir = skillAt(path.join(home, '.claude', 'skills'), 'fmt', 'name: fmt\ndescription: Formats things.', 'Format $ARGUMENTS using STYLE.md.');
    const kernel = kernelFor();
    const session = await testSession(kernel);
    const used = await call(kernel, session, 'skill', { name: 'fmt', arguments: 'src/a.ts' });
    expect(used.content).toContain(`Base folder: ${dir}`);
    expect(used.content).toContain('Format src/a.ts using STYLE.md.');
    const unknown = await call(kernel, session, 'skill', { name: 'nope' });
    expect(unknown).toMatchObject({ isError: true, content: 'No skill named "nope". Skills: fmt' });
    const tools = await kernel.hooks.selectTools.promise(kernel.tools.list(), auxiliaryTurn(kernel, session));
    expect(tools.map((t) => t.name).filter((n) => /skill/i.test(n))).toEqual(['skill']);
    // A session that found no skills (another HOME) is sent no skill tool.
    process.env.HOME = ws.dir;
    const none = await testSession(kernel);
    expect((await kernel.hooks.selectTools.promise(kernel.tools.list(), auxiliaryTurn(kernel, none))).map((t) => t.name)).not.toContain('skill');
  });

  it("makes a user skill's folder readable, never the home folder a symlinked skill points at", async () => {
    const dir = skillAt(path.join(home, '.claude', 'skills'), 'ok', 'name: ok\ndescription: x');
    writeFileSync(path.join(home, 'SKILL.md'), '---\nname: home-link\ndescription: x\n---\nbody\n');
    symlinkSync(home, path.join(home, '.claude', 'skills', 'home-link'));
    const kernel = kernelFor();
    const session = await testSession(kernel);
    expect(session.data.get('permissions:readable-roots')).toEqual([dir]);
  });

  it("grants an honoured skill's allowed-tools once, under the deny rules", async () => {
    skillAt(path.join(home, '.claude', 'skills'), 'git', 'name: git\ndescription: x\nallowed-tools: Bash(git status:*)');
    const kernel = kernelFor();
    const session = await testSession(kernel);
    const ask = { id: 'b', name: 'bash', input: { command: 'git status' } };
    expect((await kernel.hooks.prePermission.promise(ask, auxiliaryTurn(kernel, session)))?.behavior).toBe('ask');
    await call(kernel, session, 'skill', { name: 'git' });
    await call(kernel, session, 'skill', { name: 'git' });
    expect((session.data.get('permissions:session-rules') as unknown[]).length).toBe(1);
    expect((await kernel.hooks.prePermission.promise(ask, auxiliaryTurn(kernel, session)))?.behavior).toBe('allow');
  });

  it('an allow a skill grants never loosens a deny rule', async () => {
    skillAt(path.join(home, '.claude', 'skills'), 'all', 'name: all\ndescription: x\nallowed-tools: Bash(*)');
    const kernel = testKernel([instructions(), permissions(), toolBash(), skills()], {
      keelHome: ws.home,
      cwd: ws.dir,
      projectRoot: ws.dir,
      permissions: { allow: [], ask: [], deny: ['bash(rm:*)'] },
    });
    const session = await testSession(kernel);
    await call(kernel, session, 'skill', { name: 'all' });
    const decide = (command: string) => kernel.hooks.prePermission.promise({ id: 'b', name: 'bash', input: { command } }, auxiliaryTurn(kernel, session));
    expect((await decide('echo hi'))?.behavior).toBe('allow');
    expect(await decide('rm -rf src')).toMatchObject({ behavior: 'deny' });
  });
});
