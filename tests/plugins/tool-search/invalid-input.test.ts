import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../kernel/index.js';
import { callTools, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';
import { builtinTools, loopKernel } from './loop.js';

let ws: Workspace;
let server: ScriptedServer;
beforeEach(() => {
  ws = makeWorkspace();
});
afterEach(async () => {
  await server?.close();
  ws.cleanup();
});

/** One bad input per tool, and the field its error must name. */
const BAD: Array<{ name: string; input: unknown; field: string }> = [
  { name: 'read_file', input: { path: 'a', offset: 0 }, field: 'offset' },
  { name: 'write_file', input: { path: 'a' }, field: 'content' },
  { name: 'edit_file', input: { path: 'a', old_string: 'x' }, field: 'new_string' },
  { name: 'glob', input: { pattern: 3 }, field: 'pattern' },
  { name: 'grep', input: { pattern: 'x', output_mode: 'lines' }, field: 'output_mode' },
  { name: 'ls', input: { ignore: 'node_modules' }, field: 'ignore' },
  { name: 'bash', input: { command: 'ls', timeout: 'soon' }, field: 'timeout' },
  { name: 'web_fetch', input: { url: 'file:///etc/passwd', prompt: 'x' }, field: 'url' },
  { name: 'todo_write', input: { todos: [{ content: 'a', status: 'done' }] }, field: 'todos.0.status' },
  { name: 'tool_search', input: { query: '' }, field: 'query' },
];

describe('invalid input', () => {
  it('becomes an error tool_result naming the field, for every built-in tool, and the loop goes on', async () => {
    server = await startAnthropicServer([callTools(...BAD.map((b, i) => ({ name: b.name, input: b.input, id: `bad_${i}` }))), say('recovered')]);
    const { kernel, session } = await loopKernel(builtinTools(), ws, server.url);
    const result = await runAgent(kernel, session, 'go');
    expect(result.result).toBe('recovered');
    const body = server.messageRequests()[1].body;
    const blocks = body.messages[body.messages.length - 1].content as Array<{ tool_use_id: string; content: string; is_error?: boolean }>;
    expect(blocks).toHaveLength(BAD.length);
    BAD.forEach((bad, i) => {
      expect(blocks[i].tool_use_id).toBe(`bad_${i}`);
      expect(blocks[i].is_error).toBe(true);
      expect(blocks[i].content).toContain(`Invalid input for tool ${bad.name}: ${bad.field}: `);
    });
    expect(blocks[7].content).toContain('url: must be an http:// or https:// URL');
  });
});
