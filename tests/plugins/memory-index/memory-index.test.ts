import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type CommandContext, type Kernel, type Session } from '../../../kernel/index.js';
import instructions from '../../../plugins/instructions/index.js';
import memoryIndex from '../../../plugins/memory-index/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import { say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

const INDEX = '- build → memory/build.md (how to build and test)\n- style -> memory/style.md (naming rules)\n';

describe('memory-index', () => {
  let server: ScriptedServer | undefined;
  let ws: Workspace | undefined;
  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  async function setup(turns = 1) {
    server = await startAnthropicServer(Array.from({ length: turns }, () => say('ok')));
    const kernel = testKernel([instructions(), memoryIndex(), queryAnthropic(), permissions()], { baseURL: server.url, cwd: ws!.dir, projectRoot: ws!.dir });
    const session = await testSession(kernel);
    return { kernel, session };
  }
  const sent = () => server!.messageRequests().map((r) => JSON.stringify(r.body));
  const systemOf = (i: number) => (server!.messageRequests()[i]!.body as { system: Array<{ text: string }> }).system.map((b) => b.text).join('\n');
  const command = async (kernel: Kernel, session: Session, args: string) => {
    const ctx: CommandContext = { kernel, session, print: () => undefined, signal: new AbortController().signal };
    return String(await kernel.commands.get('memory')!.run(args, ctx));
  };

  it('puts the index in the system prompt and leaves topic files out of context', async () => {
    ws = makeWorkspace();
    ws.write('.keel/MEMORY.md', INDEX);
    ws.write('.keel/memory/build.md', 'TOPIC SECRET: run npm test');
    const { kernel, session } = await setup();
    await runAgent(kernel, session, 'hi');
    const system = systemOf(0);
    expect(system).toContain('- build → memory/build.md (how to build and test)');
    expect(system).toContain('read it with read_file');
    expect(sent().some((body) => body.includes('TOPIC SECRET'))).toBe(false);
    expect(system).not.toContain('consolidate');
  });

  it('rereads the index when the agent changes it during the session', async () => {
    ws = makeWorkspace();
    ws.write('.keel/MEMORY.md', INDEX);
    const { kernel, session } = await setup(2);
    await runAgent(kernel, session, 'one');
    ws.write('.keel/MEMORY.md', `${INDEX}- deploy → memory/deploy.md (release steps, added later)\n`);
    await runAgent(kernel, session, 'two');
    expect(systemOf(0)).not.toContain('release steps');
    expect(systemOf(1)).toContain('release steps, added later');
  });

  it('tells the agent to consolidate an index past about 2 000 tokens', async () => {
    ws = makeWorkspace();
    ws.write('.keel/MEMORY.md', Array.from({ length: 200 }, (_, i) => `- topic${i} → memory/topic${i}.md (a fairly long description of topic ${i})`).join('\n'));
    const { kernel, session } = await setup();
    await runAgent(kernel, session, 'hi');
    expect(systemOf(0)).toMatch(/The index is about \d+ tokens, over the 2000 it should hold: consolidate it now/);
  });

  it('cuts an index far over its size at a whole line, saying how much is left', async () => {
    ws = makeWorkspace();
    const lines = Array.from({ length: 3000 }, (_, i) => `- topic${i} → memory/topic${i}.md (about topic ${i})`);
    ws.write('.keel/MEMORY.md', lines.join('\n'));
    const { kernel, session } = await setup();
    await runAgent(kernel, session, 'hi');
    const system = systemOf(0);
    const shown = lines.filter((line) => system.includes(`${line}\n`)).length;
    expect(shown).toBeGreaterThan(500);
    expect(system).not.toContain('topic2999');
    expect(system).toContain(`[… ${3000 - shown} more lines not shown: read .keel/MEMORY.md with read_file]\n</memory-index>`);
    expect(system.length).toBeLessThan(2000 * 4 * 4 + 2000);
    expect(system).toMatch(/consolidate it now/);
  });

  it('says there is no index yet when the file is missing', async () => {
    ws = makeWorkspace();
    const { kernel, session } = await setup();
    await runAgent(kernel, session, 'hi');
    expect(systemOf(0)).toContain('There is no index yet');
  });

  it('/memory shows the index, opens a topic by name or file, and refuses paths outside .keel/', async () => {
    ws = makeWorkspace();
    ws.write('.keel/MEMORY.md', INDEX);
    ws.write('.keel/memory/build.md', 'Run npm test.');
    ws.write('.keel/memory/style.md', 'camelCase');
    ws.write('secret.txt', 'outside');
    const { kernel, session } = await setup(0);
    const index = await command(kernel, session, '');
    expect(index).toContain('- build → memory/build.md');
    expect(index).toContain('Topic files in .keel/memory: build.md, style.md');
    expect(await command(kernel, session, 'build')).toBe('.keel/memory/build.md:\n\nRun npm test.');
    expect(await command(kernel, session, 'style.md')).toContain('camelCase');
    expect(await command(kernel, session, '../../secret.txt')).toMatch(/^No memory topic "..\/..\/secret.txt" \(known: build, style\)\.$/);
  });

  it('/memory without an index says so', async () => {
    ws = makeWorkspace();
    const { kernel, session } = await setup(0);
    expect(await command(kernel, session, '')).toContain('No memory index yet');
  });
});
