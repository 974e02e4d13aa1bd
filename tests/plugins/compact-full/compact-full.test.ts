import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, type CommandContext, type Kernel, type MessageParam, type Session } from '../../../kernel/index.js';
import compactAuto from '../../../plugins/compact-auto/index.js';
import compactFull from '../../../plugins/compact-full/index.js';
import contextBudget from '../../../plugins/context-budget/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import queryService from '../../../plugins/query-service/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer, type ScriptedTurn } from '../../helpers/anthropic-server.js';
import { testKernel, testSession } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { bigTool, FIVE_SECTIONS, isSmall, readFileTool, recorder, SMALL_MODEL, textOfMessage, toolsPlugin } from '../compact-auto/harness.js';

describe('compact-full', () => {
  let server: ScriptedServer | undefined;
  let ws: Workspace | undefined;
  afterEach(async () => {
    await server?.close();
    ws?.cleanup();
  });

  async function setup(small: () => ScriptedTurn, opts: Parameters<typeof compactFull>[0] = {}) {
    ws = makeWorkspace();
    ws.write('src/a.ts', 'export const a = 1;\n');
    ws.write('src/b.ts', 'export const b = 2;\n');
    ws.write('notes.md', '# notes\n');
    ws.write('big.txt', 'y'.repeat(50_000));
    server = await startAnthropicServer(
      [
        callTool('read_file', { path: 'notes.md' }),
        callTool('read_file', { path: 'src/a.ts' }),
        callTool('read_file', { path: 'big.txt' }),
        callTool('big_output', { lines: 5 }),
        callTool('read_file', { path: 'src/b.ts' }),
        callTool('read_file', { path: 'missing.ts' }),
        say('read them all'),
      ],
      { route: (request) => (isSmall(request) ? small() : undefined) },
    );
    const rec = recorder();
    const kernel = testKernel(
      [rec.plugin, toolsPlugin(bigTool, readFileTool), queryAnthropic(), queryService(), permissions(), contextBudget(), compactAuto(), compactFull(opts)],
      { baseURL: server.url, keelHome: ws.home, cwd: ws.dir, projectRoot: ws.dir, smallModel: SMALL_MODEL },
    );
    const session = await testSession(kernel);
    expect((await runAgent(kernel, session, 'Read the files, then wait.')).subtype).toBe('success');
    return { kernel, session, rec };
  }

  const command = async (kernel: Kernel, session: Session, args: string) => {
    const printed: string[] = [];
    const ctx: CommandContext = { kernel, session, print: (t) => printed.push(t), signal: new AbortController().signal };
    return (await kernel.commands.get('compact')!.run(args, ctx)) ?? printed.join('\n');
  };

  it('/compact summarises everything, then re-injects recent files (newest first, capped), the todo list and the tools', async () => {
    const { kernel, session, rec } = await setup(() => say(FIVE_SECTIONS), { maxFiles: 3, maxFileTokens: 1000 });
    ws!.write('src/b.ts', 'export const b = 3; // changed after the read\n');
    kernel.state.set({
      todos: [
        { content: 'Read the files', status: 'completed' },
        { content: 'Refactor b.ts', status: 'in_progress' },
      ],
    });
    const out = await command(kernel, session, 'focus on b.ts');
    expect(out).toMatch(/^Compacted the conversation: \d+ → \d+ tokens\.$/);

    const small = server!.messageRequests().filter(isSmall);
    expect(small).toHaveLength(1);
    expect(JSON.stringify(small[0]!.body)).toContain('Additional instructions for this summary: focus on b.ts');

    expect(session.messages).toHaveLength(1);
    const head = textOfMessage(session.messages[0]!);
    expect(head).toContain('<summary>');
    // Newest first, at most three, the missing file skipped, current contents, the big one capped.
    const order = ['src/b.ts', 'big.txt', 'src/a.ts'].map((f) => head.indexOf(`<file path="${ws!.path(f)}">`));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((x, y) => x - y));
    expect(head).not.toContain(ws!.path('notes.md'));
    expect(head).not.toContain('missing.ts"');
    expect(head).toContain('export const b = 3; // changed after the read');
    expect(head).toContain('truncated at about 1000 tokens');
    expect(head).not.toContain('y'.repeat(4001));
    expect(head).toContain('- [in_progress] Refactor b.ts');
    expect(head).toContain('Tools you have used in this session: read_file, big_output.');
    expect(head).toContain('Read the files, then wait.');
    expect(rec.of('compact')).toEqual([expect.objectContaining({ trigger: 'manual', tier: 'compact-full' })]);
    expect(kernel.state.get().contextBudget!.estimated).toBe(true);
  });

  it('the compaction service routes a manual trigger to the full compaction', async () => {
    const { kernel, session, rec } = await setup(() => say(FIVE_SECTIONS));
    expect(await kernel.services.get('compaction')!.compact(session, { trigger: 'manual' })).toBe(true);
    expect(rec.of('compact')[0]).toMatchObject({ tier: 'compact-full' });
  });

  it('keeps an unanswered tool_use after the head, and the latest request verbatim', async () => {
    const { kernel, session } = await setup(() => say(FIVE_SECTIONS));
    const open: MessageParam = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_open', name: 'big_output', input: { lines: 1 } }] };
    session.messages.push({ role: 'user', content: 'Now count the lines of notes.md.' }, { role: 'assistant', content: [{ type: 'text', text: 'Counting.' }] }, open);
    expect(await kernel.services.get('full-compaction')!.compact(session)).toBe(true);
    expect(session.messages).toHaveLength(2);
    expect(session.messages[1]).toBe(open);
    const head = textOfMessage(session.messages[0]!);
    expect(head).toContain("The user's latest request, verbatim:\nNow count the lines of notes.md.");
    expect(head).not.toContain('toolu_open');
  });

  it('reports a failed summary and leaves the conversation unchanged', async () => {
    const { kernel, session, rec } = await setup(() => ({ status: 500, errorMessage: 'nope' }));
    const before = JSON.stringify(session.messages);
    const out = await command(kernel, session, '');
    expect(out).toMatch(/^Compaction failed: the summary request failed: .*The conversation is unchanged\.$/);
    expect(JSON.stringify(session.messages)).toBe(before);
    expect(rec.of('compact')).toHaveLength(0);
  });
});
