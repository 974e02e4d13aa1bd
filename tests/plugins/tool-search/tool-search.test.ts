import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../kernel/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { builtinTools, loopKernel, manyDeferredTools } from './loop.js';

let ws: Workspace;
let server: ScriptedServer | undefined;
beforeEach(() => {
  ws = makeWorkspace();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  ws.cleanup();
});

const toolNames = (body: { tools?: Array<{ name: string }> }) => (body.tools ?? []).map((t) => t.name);
const toolResults = (body: { messages: Array<{ role: string; content: unknown }> }) => {
  const last = body.messages[body.messages.length - 1];
  return (last.content as Array<{ type: string; content: unknown; is_error?: boolean }>).filter((b) => b.type === 'tool_result');
};

describe('deferred loading and tool_search', () => {
  it('with 200 deferred tools a request carries at most 12 schemas, and tool_search reaches one in two turns', async () => {
    server = await startAnthropicServer([
      callTool('tool_search', { query: 'celsius fahrenheit' }),
      callTool('convert_temperature', { celsius: 100 }),
      say('212 F'),
      say('again'),
    ]);
    const { kernel, session, events } = await loopKernel([...builtinTools(), manyDeferredTools(200)], ws, server.url);
    const result = await runAgent(kernel, session, 'convert 100 C');
    expect(result.result).toBe('212 F');

    const requests = server.messageRequests().map((r) => r.body);
    for (const body of requests) expect(body.tools.length).toBeLessThanOrEqual(12);
    expect(toolNames(requests[0])).toContain('tool_search');
    expect(toolNames(requests[0])).not.toContain('convert_temperature');
    expect(toolNames(requests[0])).not.toContain('web_fetch');
    expect(JSON.stringify(toolResults(requests[1])[0].content)).toContain('convert_temperature: Converts a temperature between celsius and fahrenheit.');
    expect(toolNames(requests[1])).toContain('convert_temperature');
    expect(toolResults(requests[2])[0]).toMatchObject({ content: '212 F' });

    // The system prompt names deferred tools so the model knows what to search for.
    const system = JSON.stringify(requests[0].system);
    expect(system).toContain('Deferred tools (load them with tool_search before calling them): convert_temperature, mcp__bulk__tool_0');
    expect(system).toContain('and 141 more (search by keyword)');

    // Loaded for the rest of the session: the next run still carries it.
    await runAgent(kernel, session, 'again');
    expect(toolNames(server.messageRequests()[3].body)).toContain('convert_temperature');

    const bytes = events.filter((e) => e.type === 'tools_bytes');
    expect(bytes).toHaveLength(4);
    expect(bytes[0]).toMatchObject({ count: requests[0].tools.length });
    // The provider may mark the last tool for prompt caching; the event counts the tools as the loop built them.
    const sent = JSON.stringify(requests[0].tools.map(({ cache_control: _c, ...tool }: Record<string, unknown>) => tool));
    expect((bytes[0] as { bytes: number }).bytes).toBe(Buffer.byteLength(sent));
  });

  it('loads exact names with select:, and says when nothing matches', async () => {
    server = await startAnthropicServer([
      callTool('tool_search', { query: 'select:web_fetch,no_such_tool' }),
      callTool('tool_search', { query: 'zebra quantum' }),
      say('ok'),
    ]);
    const { kernel, session } = await loopKernel(builtinTools(), ws, server.url);
    await runAgent(kernel, session, 'go');
    const [, second, third] = server.messageRequests().map((r) => r.body);
    expect(toolResults(second)[0].content).toBe(
      'Loaded 1 tool, callable from your next turn:\n- web_fetch: Fetch an http(s) URL and read it as markdown (HTML is converted).\nNot deferred tools: no_such_tool.',
    );
    expect(toolNames(second)).toContain('web_fetch');
    // With every deferred tool loaded, tool_search itself is no longer sent.
    expect(toolNames(second)).not.toContain('tool_search');
    expect(toolResults(third)[0].content).toBe('No deferred tool matches "zebra quantum".\nDeferred tools: web_fetch');
  });

  it('a resumed session keeps the deferred tools its history called', async () => {
    server = await startAnthropicServer([say('resumed')]);
    const { kernel, session } = await loopKernel([...builtinTools(), manyDeferredTools(200)], ws, server.url);
    // What the session store puts back on resume: a history in which a deferred tool was called.
    session.messages.push(
      { role: 'user', content: 'convert 100 C' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_old', name: 'convert_temperature', input: { celsius: 100 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_old', content: '212 F' }] },
      { role: 'assistant', content: [{ type: 'text', text: '212 F' }] },
    );
    await runAgent(kernel, session, 'and 0 C?');
    const names = toolNames(server.messageRequests()[0]!.body);
    expect(names).toContain('convert_temperature');
    expect(names).not.toContain('mcp__bulk__tool_0');
  });

  it('sends web_fetch only once loaded, and keeps loaded tools per session', async () => {
    server = await startAnthropicServer([callTool('tool_search', { query: 'fetch url' }), say('ok'), say('other')]);
    const { kernel, session } = await loopKernel(builtinTools(), ws, server.url);
    await runAgent(kernel, session, 'go');
    const { startSession } = await import('../../../kernel/index.js');
    const other = await startSession(kernel, { cwd: ws.dir, projectRoot: ws.dir, permissionMode: 'auto' });
    await runAgent(kernel, other, 'go');
    const bodies = server.messageRequests().map((r) => r.body);
    expect(toolNames(bodies[0])).not.toContain('web_fetch');
    expect(toolNames(bodies[1])).toContain('web_fetch');
    expect(toolNames(bodies[2])).not.toContain('web_fetch');
  });
});
