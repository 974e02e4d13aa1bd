import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Kernel, Plugin, QueryRequest, Session } from '../../../kernel/index.js';
import instructions from '../../../plugins/instructions/index.js';
import toolAgent from '../../../plugins/tool-agent/index.js';
import toolsFs from '../../../plugins/tools-fs/index.js';
import { testKernel, testSession } from '../../helpers/kernel.js';

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A `query` service that answers with `reply` and records what it was asked. */
function fakeQuery(reply: string, asked: Array<Pick<QueryRequest, 'system' | 'messages'>>, whileAsked?: () => void): Plugin {
  return {
    name: 'fake-query',
    kernel: '^1.0.0',
    apply: (k) =>
      k.services.provide('query', {
        ask: async (request) => {
          asked.push(request);
          whileAsked?.();
          return { model: 'm', content: [{ type: 'text', text: reply, citations: null }], stopReason: 'end_turn', usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } };
        },
      }),
  };
}

async function setup(reply = 'You check things.', opts: { fileTools?: boolean; whileAsked?: () => void } = {}) {
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'keel-agents-')));
  temps.push(root);
  const project = path.join(root, 'project');
  const home = path.join(root, 'home');
  mkdirSync(project);
  mkdirSync(home);
  const asked: Array<Pick<QueryRequest, 'system' | 'messages'>> = [];
  const plugins = [instructions(), fakeQuery(reply, asked, opts.whileAsked), ...(opts.fileTools === false ? [] : [toolsFs()]), toolAgent()];
  const kernel = testKernel(plugins, { cwd: project, projectRoot: project, keelHome: home, trusted: true });
  const session = await testSession(kernel, { cwd: project, projectRoot: project });
  const run = (args: string) => kernel.commands.get('agents')!.run(args, { kernel, session, print: () => undefined, signal: new AbortController().signal });
  return { kernel: kernel as Kernel, session: session as Session, project, home, asked, run };
}

describe('/agents', () => {
  it('creates an agent file from the model’s prompt, which list, show and the agent tool then see', async () => {
    const { kernel, project, asked, run } = await setup('You check migrations.');
    expect(await run('')).toMatch(/^No custom agents/);
    const out = await run('create db-check checks: SQL migrations');
    const file = path.join(project, '.claude', 'agents', 'db-check.md');
    expect(out).toBe(`Created ${file}. Edit it to set tools (e.g. tools: Read, Grep) or model; the model can run it now as subagent_type "db-check".`);
    // The description is quoted, so YAML-looking text stays text.
    expect(readFileSync(file, 'utf8')).toBe('---\nname: db-check\ndescription: "checks: SQL migrations"\n---\nYou check migrations.\n');
    expect(JSON.stringify(asked[0]!.messages)).toContain('What it does: checks: SQL migrations');
    expect(await run('list')).toMatch(/^ {2}db-check\s+checks: SQL migrations {2}\(.*db-check\.md\)$/m);
    expect(await run('show db-check')).toContain('You check migrations.');
    expect(kernel.tools.get('agent')!.description).toContain('- db-check: checks: SQL migrations');
  });

  it('writes to $KEEL_HOME/agents with --user, and never over an existing file', async () => {
    const { home, asked, run } = await setup();
    await run('create helper --user helps');
    expect(readFileSync(path.join(home, 'agents', 'helper.md'), 'utf8')).toContain('name: helper');
    await expect(run('create helper --user again')).rejects.toThrow(`${path.join(home, 'agents', 'helper.md')} already exists; edit it, or pick another name`);
    expect(asked).toHaveLength(1);
  });

  it('a file that appears while the model writes the prompt is left as it is', async () => {
    let target = '';
    const { run, home } = await setup('You help.', { whileAsked: () => writeFileSync(target, 'written meanwhile\n') });
    target = path.join(home, 'agents', 'late.md');
    mkdirSync(path.dirname(target), { recursive: true });
    await expect(run('create late --user helps')).rejects.toThrow(`${target} already exists; edit it, or pick another name`);
    expect(readFileSync(target, 'utf8')).toBe('written meanwhile\n');
    expect(readdirSync(path.dirname(target))).toEqual(['late.md']);
  });

  it("without the file tools' safe-files service, create says which plugin offers it and asks the model nothing", async () => {
    const { run, asked, project } = await setup('You help.', { fileTools: false });
    await expect(run('create helper helps')).rejects.toThrow("creating an agent file needs the file tools' safe-files service (plugin tools-fs), which this agent does not have");
    expect(asked).toHaveLength(0);
    expect(existsSync(path.join(project, '.claude', 'agents', 'helper.md'))).toBe(false);
  });

  it('names what is wrong: a bad name, no description, an unknown agent or action, a broken file', async () => {
    const { project, run, kernel, session } = await setup();
    await expect(run('create ../x does things')).rejects.toThrow(/the name must be letters, digits, - or _/);
    await expect(run('create ok')).rejects.toThrow(/say what the agent does/);
    await expect(run('show nobody')).rejects.toThrow('no agent named "nobody"; /agents lists them');
    await expect(run('delete x')).rejects.toThrow(/unknown action "delete"/);
    mkdirSync(path.join(project, '.claude', 'agents'), { recursive: true });
    writeFileSync(path.join(project, '.claude', 'agents', 'broken.md'), 'no front matter');
    await kernel.hooks.sessionStart.promise(session);
    expect(await run('')).toMatch(/^ {2}broken\s+not loaded: .*no front matter/m);
    await expect(run('show broken')).rejects.toThrow(/broken is not loaded: /);
  });
});
