/** Output styles through the built CLI: Claude Code's style files and settings change the system prompt the server gets. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();

const systemOf = (s: ScriptedServer, i: number) => (s.messageRequests()[i]!.body.system as Array<{ text: string }>).map((b) => b.text).join('\n');

const PIRATE = `---
name: Pirate
description: Answers like a pirate captain
keep-coding-instructions: false
---
# Pirate style

Answer every question like a pirate captain would, with nautical words.
`;

describe('output styles', () => {
  it("a project's style file and .claude/settings.json's outputStyle replace the tone (and here the coding) section", async () => {
    const { env, ws, server } = await prepare([say('Arr.'), say('Arr again.')]);
    ws.write('.claude/output-styles/pirate.md', PIRATE);
    ws.write('.claude/settings.json', JSON.stringify({ outputStyle: 'Pirate' }));
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env });
    expect(run).toMatchObject({ code: 0, stdout: 'Arr.\n', stderr: '' });
    const system = systemOf(server, 0);
    expect(system).toContain('Answer every question like a pirate captain would');
    expect(system).not.toContain('Be brief');
    expect(system).not.toContain('read before you edit');
    expect(system).toContain('You are Keel');
    // The same style again: the same system blocks, byte for byte (the cache prefix holds).
    await runKeel(['-p', 'again', '--trust'], { cwd: ws.dir, env });
    expect(JSON.stringify(server.messageRequests()[1]!.body.system)).toBe(JSON.stringify(server.messageRequests()[0]!.body.system));
  });

  it('/output-style lists the styles and switches to one; the next run uses it', async () => {
    const { env, ws, server } = await prepare([say('explained')]);
    const list = await runKeel(['-p', '/output-style', '--trust'], { cwd: ws.dir, env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^\* default /m);
    expect(list.stdout).toMatch(/^ {2}explanatory /m);
    expect(list.stdout).toMatch(/^ {2}learning /m);
    const switched = await runKeel(['-p', '/output-style Explanatory', '--trust'], { cwd: ws.dir, env });
    expect(switched).toMatchObject({ code: 0, stderr: '' });
    expect(switched.stdout).toContain('Output style: explanatory');
    expect(JSON.parse(readFileSync(ws.path('.claude/settings.local.json'), 'utf8'))).toEqual({ outputStyle: 'explanatory' });
    const run = await runKeel(['-p', 'why?', '--trust'], { cwd: ws.dir, env });
    expect(run.stdout).toBe('explained\n');
    const system = systemOf(server, 0);
    expect(system).toContain('Output style: explanatory');
    expect(system).toContain('read before you edit');
    const unknown = await runKeel(['-p', '/output-style nope', '--trust'], { cwd: ws.dir, env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('keel: /output-style: no style named "nope"; styles: default, explanatory, learning\n');
  });

  it("the user's styles in ~/.claude/output-styles and $KEEL_HOME/output-styles work in any project", async () => {
    const { env, ws, server } = await prepare([say('ok')]);
    const home = path.join(ws.home, 'fake-home');
    mkdirSync(path.join(home, '.claude', 'output-styles'), { recursive: true });
    writeFileSync(path.join(home, '.claude', 'output-styles', 'pirate.md'), PIRATE);
    mkdirSync(path.join(ws.home, 'output-styles'), { recursive: true });
    writeFileSync(path.join(ws.home, 'output-styles', 'terse.md'), '---\ndescription: one line answers\n---\nAnswer in one line.\n');
    writeFileSync(path.join(ws.home, 'agent.config.ts'), "export default { outputStyle: 'terse' };\n");
    const list = await runKeel(['-p', '/output-style'], { cwd: ws.dir, env: { ...env, HOME: home } });
    expect(list.stdout).toMatch(/^ {2}Pirate\s+Answers like a pirate captain/m);
    expect(list.stdout).toMatch(/^\* terse\s+one line answers/m);
    await runKeel(['-p', 'hi'], { cwd: ws.dir, env: { ...env, HOME: home } });
    expect(systemOf(server, 0)).toContain('Answer in one line.');
  });

  it('a broken style file is a warning naming the file and the field, and keel doctor lists it', async () => {
    const { env, ws, server } = await prepare([say('ok')]);
    const bad = path.join(ws.home, 'output-styles', 'bad.md');
    mkdirSync(path.dirname(bad), { recursive: true });
    writeFileSync(bad, '---\nkeep-coding-instructions: sometimes\n---\nBe odd.\n');
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(`keel: warn: output style not loaded: ${bad}: field "keep-coding-instructions" must be true or false\n`);
    expect(server.messageRequests()).toHaveLength(1);
    const doctor = await runKeel(['doctor'], { cwd: ws.dir, env });
    expect(doctor.stdout).toMatch(/^warn {2}output styles\s+.*bad\.md: field "keep-coding-instructions" must be true or false$/m);
  });

  it("an untrusted project's style files are not loaded, and Keel says so once", async () => {
    const { env, ws, server } = await prepare([say('plain')]);
    ws.write('.claude/output-styles/pirate.md', PIRATE);
    ws.write('.claude/output-styles/other.md', 'Another style.');
    const run = await runKeel(['-p', 'hi'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(run.stderr.match(/output styles in .* are not loaded: the folder is not trusted/g)).toHaveLength(1);
    expect(systemOf(server, 0)).not.toContain('pirate');
    const list = await runKeel(['-p', '/output-style Pirate'], { cwd: ws.dir, env });
    expect(list.code).toBe(1);
    expect(list.stderr).toContain('no style named "Pirate"');
  });
});
