/** Skills through the built CLI: a SKILL.md written as Claude Code documents it, listed, used and its files read. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, plainMessages, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';
import { installSkills } from '../helpers/skills.js';

const prepare = useScriptedProjects();

function results(s: ScriptedServer): Record<string, { content: unknown; is_error?: boolean }> {
  const out: Record<string, { content: unknown; is_error?: boolean }> = {};
  for (const r of s.messageRequests()) for (const m of r.body.messages) if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') out[b.tool_use_id] = b;
  return out;
}
const text = (r: { content: unknown } | undefined) => (typeof r?.content === 'string' ? r.content : JSON.stringify(r?.content ?? ''));

/** A skill folder as Claude Code's docs show one: SKILL.md with front matter, and a bundled reference file. */
function writeSkill(root: string, name: string, description: string, body: string, extra = ''): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\n${body}\n`);
  return dir;
}

describe('skills', () => {
  it("lists a user's skill in the prompt, the model uses it with Skill and reads its bundled file from outside the project", async () => {
    let dir = '';
    const { env, ws, server } = await prepare([callTool('Skill', { name: 'release-notes' }, 's1'), () => callTool('read_file', { path: path.join(dir, 'FORMAT.md') }, 'r1'), say('notes written')]);
    const home = path.join(path.dirname(ws.dir), 'fake-home');
    dir = writeSkill(path.join(home, '.claude', 'skills'), 'release-notes', 'Write release notes from the git log. Use when asked for release notes or a changelog.', '# Release notes\n\nRead FORMAT.md in this folder and follow it.');
    writeFileSync(path.join(dir, 'FORMAT.md'), 'BUNDLED-FORMAT: one bullet per change, newest first.\n');
    const run = await runKeel(['-p', 'write the release notes'], { cwd: ws.dir, env: { ...env, HOME: home } });
    expect(run.stderr).toBe('');
    expect(run).toMatchObject({ code: 0, stdout: 'notes written\n' });
    const first = server.messageRequests()[0]!.body;
    const system = JSON.stringify(first.system);
    expect(system).toContain('# Skills');
    expect(system).toContain('- release-notes: Write release notes from the git log.');
    // Progressive disclosure: the body is not in the request until the skill is used.
    expect(JSON.stringify(first)).not.toContain('Read FORMAT.md');
    const tools = first.tools.map((t: { name: string }) => t.name);
    expect(tools).toContain('skill');
    expect(tools).not.toContain('Skill');
    expect(results(server).s1?.is_error).toBeFalsy();
    expect(text(results(server).s1)).toContain(`Base folder: ${dir}`);
    expect(text(results(server).s1)).toContain('Read FORMAT.md in this folder');
    expect(results(server).r1?.is_error).toBeFalsy();
    expect(text(results(server).r1)).toContain('BUNDLED-FORMAT');
  });

  it("your skill's folder is open to reads only: a read deny rule still holds, and a write there is still asked (so refused headless)", async () => {
    let dir = '';
    const { env, ws, server } = await prepare([
      callTool('skill', { name: 'notes' }, 's1'),
      () => callTool('grep', { pattern: 'BUNDLED', path: dir }, 'g1'),
      () => callTool('read_file', { path: path.join(dir, 'private.md') }, 'denied'),
      () => callTool('write_file', { path: path.join(dir, 'SKILL.md'), content: '---\nname: notes\ndescription: hijacked\n---\nHIJACKED\n' }, 'write'),
      say('done'),
    ]);
    const home = path.join(path.dirname(ws.dir), 'fake-home');
    dir = writeSkill(path.join(home, '.claude', 'skills'), 'notes', 'Take notes.', 'Read FORMAT.md.');
    writeFileSync(path.join(dir, 'FORMAT.md'), 'BUNDLED-FORMAT\n');
    writeFileSync(path.join(dir, 'private.md'), 'PRIVATE-CANARY\n');
    const run = await runKeel(['-p', 'take notes', '--disallowedTools', `Read(${path.join(dir, 'private.md')})`], { cwd: ws.dir, env: { ...env, HOME: home } });
    expect(run).toMatchObject({ code: 0, stdout: 'done\n' });
    const r = results(server);
    expect(r.g1?.is_error).toBeFalsy();
    expect(text(r.g1)).toContain('FORMAT.md');
    expect(r.denied?.is_error).toBe(true);
    expect(text(r.denied)).toMatch(/denied by the rule/);
    expect(JSON.stringify(server.messageRequests().map((q) => q.body))).not.toContain('PRIVATE-CANARY');
    expect(r.write?.is_error).toBe(true);
    expect(readFileSync(path.join(dir, 'SKILL.md'), 'utf8')).not.toContain('HIJACKED');
  });

  it('sends no skill tool and no section when there are no skills', async () => {
    const { env, ws, server } = await prepare([say('ok')]);
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HOME: path.join(path.dirname(ws.dir), 'fake-home') } });
    expect(run.code).toBe(0);
    const first = server.messageRequests()[0]!.body;
    expect(first.tools.map((t: { name: string }) => t.name)).not.toContain('skill');
    expect(JSON.stringify(first.system)).not.toContain('# Skills');
  });

  it('/skills lists the project skill first, names the clash and the bad SKILL.md, and the rest still load', async () => {
    const { env, ws, server } = await prepare();
    const home = path.join(path.dirname(ws.dir), 'fake-home');
    writeSkill(ws.path('.claude/skills'), 'lint', 'The project lint rules.', 'Run the linter.');
    writeSkill(path.join(home, '.claude', 'skills'), 'lint', 'The user lint rules.', 'Lint everything.');
    writeSkill(ws.path('.agents/skills'), 'deploy', 'How this project deploys.', 'Deploy with care.');
    writeSkill(ws.path('.agents/skills'), 'compact', 'Make things smaller.', 'Shrink it.');
    mkdirSync(ws.path('.keel/skills/broken'), { recursive: true });
    writeFileSync(ws.path('.keel/skills/broken/SKILL.md'), '---\nname: Not A Valid Name\ndescription: x\n---\nbody\n');
    // Trusted: the project's skill wins a name (untrusted, yours does: adversarial/project-files.test.ts).
    const run = await runKeel(['-p', '/skills', '--trust'], { cwd: ws.dir, env: { ...env, HOME: home } });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}lint\s+The project lint rules\. \(\.claude\/skills\)$/m);
    expect(run.stdout).toMatch(/^ {2}deploy\s+How this project deploys\./m);
    expect(run.stdout).toContain('Not offered as /<name> (another command has the name; the model can still use them): compact');
    expect(run.stdout).toContain(`lint: ${path.join(home, '.claude', 'skills', 'lint', 'SKILL.md')} is shadowed by ${ws.path('.claude/skills/lint/SKILL.md')}`);
    expect(run.stdout).toContain(`${ws.path('.keel/skills/broken/SKILL.md')}: field "name": lowercase letters`);
    expect(run.stderr).toBe(`keel: warn: skill not loaded: ${ws.path('.keel/skills/broken/SKILL.md')}: field "name": lowercase letters, digits and single hyphens only (e.g. pdf-forms)\n`);
    expect(server.messageRequests()).toHaveLength(0);
  });

  it('/<skill> arguments: the user uses a skill, its body with the arguments is the request', async () => {
    const { env, ws, server } = await prepare([say('explained')]);
    writeSkill(ws.path('.claude/skills'), 'explain', 'Explain code simply.', 'Explain $ARGUMENTS to a newcomer.');
    const run = await runKeel(['-p', '/explain the parser', '--trust'], { cwd: ws.dir, env: { ...env, HOME: path.join(path.dirname(ws.dir), 'fake-home') } });
    expect(run).toMatchObject({ code: 0, stdout: 'explained\n' });
    const sent = plainMessages(server.messageRequests()[0]!.body.messages);
    expect(String(sent[0]!.content)).toContain('Explain the parser to a newcomer.');
    expect(String(sent[0]!.content)).toContain(`Base folder: ${ws.path('.claude/skills/explain')}`);
  });

  it("/<skill> arguments go in as written: $', $& and $$ in them are text, not replacement patterns", async () => {
    const { env, ws, server } = await prepare([say('ok')]);
    writeSkill(ws.path('.claude/skills'), 'price', 'Quote a price.', "Quote $ARGUMENTS exactly. TAIL-OF-BODY");
    const run = await runKeel(['-p', "/price $$5 $' $& $`", '--trust'], { cwd: ws.dir, env: { ...env, HOME: path.join(path.dirname(ws.dir), 'fake-home') } });
    expect(run).toMatchObject({ code: 0, stdout: 'ok\n' });
    const sent = String(plainMessages(server.messageRequests()[0]!.body.messages)[0]!.content);
    expect(sent).toContain("Quote $$5 $' $& $` exactly. TAIL-OF-BODY");
  });

  it('keel doctor reports a skill name clash', async () => {
    const { env, ws } = await prepare();
    const home = path.join(path.dirname(ws.dir), 'fake-home');
    writeSkill(ws.path('.claude/skills'), 'lint', 'The project lint rules.', 'Run the linter.');
    writeSkill(path.join(ws.home, 'skills'), 'lint', 'The user lint rules.', 'Lint everything.');
    // Trusted: the project's skill wins the name, so the user's is the one shadowed.
    expect((await runKeel(['trust'], { cwd: ws.dir, env: { ...env, HOME: home } })).code).toBe(0);
    const run = await runKeel(['doctor'], { cwd: ws.dir, env: { ...env, HOME: home } });
    expect(run.stdout).toMatch(/skill names.*clashes.*lint: .*keel-test-[^ ]*\/home\/skills\/lint\/SKILL\.md is shadowed by/);
  });
});

describe('request weight', () => {
  it('100 installed skills add at most 6 KB to the first request', async () => {
    const { env, ws, server } = await prepare([say('ok'), say('ok')]);
    const home = path.join(path.dirname(ws.dir), 'fake-home');
    expect((await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HOME: home } })).code).toBe(0);
    installSkills(path.join(ws.home, 'skills'), 100);
    expect((await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HOME: home } })).code).toBe(0);
    const [without, withSkills] = server.messageRequests().map((r) => Buffer.byteLength(JSON.stringify(r.body)));
    const added = withSkills! - without!;
    expect(added).toBeGreaterThan(0);
    expect(added).toBeLessThanOrEqual(6 * 1024);
    // Every one of them is listed (by name at least) and usable.
    const system = JSON.stringify(server.messageRequests()[1]!.body.system);
    expect(system).toContain('- benchmark-fixtures:');
  });
});
