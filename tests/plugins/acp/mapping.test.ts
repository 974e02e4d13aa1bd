/** How Keel's calls, results, prompts and histories look in ACP (plugins/acp: updates, prompt, history, session kernels). */
import { describe, expect, it } from 'vitest';
import { RequestError } from '@agentclientprotocol/sdk';
import toolsFs from '../../../plugins/tools-fs/index.js';
import toolBash from '../../../plugins/tool-bash/index.js';
import acp from '../../../plugins/acp/index.js';
import { commandKind, kindOf, locationsOf, resultContent, titleOf } from '../../../plugins/acp/updates.js';
import { toKeelContent } from '../../../plugins/acp/prompt.js';
import { replayUpdates } from '../../../plugins/acp/history.js';
import { mcpServersOf, sessionKernel, CLIENT_SOURCE } from '../../../plugins/acp/session-kernel.js';
import { testKernel } from '../../helpers/kernel.js';

describe('tool calls', () => {
  it('have a kind per tool, and bash commands that remove or move files say so', () => {
    expect(['read_file', 'edit_file', 'write_file', 'grep', 'glob', 'bash', 'web_fetch', 'todo_write', 'exit_plan_mode', 'mcp__x__y'].map((n) => kindOf(n, {}))).toEqual([
      'read', 'edit', 'edit', 'search', 'search', 'execute', 'fetch', 'think', 'switch_mode', 'other',
    ]);
    expect(['rm -rf build', 'git rm a', 'mv a b', 'git mv a b', 'npm test', 'rmdir x'].map(commandKind)).toEqual(['delete', 'delete', 'move', 'move', 'execute', 'delete']);
  });

  it('have titles relative to the session folder', () => {
    expect(titleOf('read_file', { path: '/p/src/a.ts' }, '/p')).toBe('Read src/a.ts');
    expect(titleOf('bash', { command: 'npm test\nnpm run lint' }, '/p')).toBe('`npm test`');
    expect(titleOf('grep', { pattern: 'TODO', path: 'src' }, '/p')).toBe('grep "TODO" in src');
    expect(titleOf('mcp__github__create_issue', {}, '/p')).toBe('github: create_issue');
  });

  it('name the files they touch through the tool’s own paths, absolute, with the line a read starts at', () => {
    const kernel = testKernel([toolsFs(), toolBash()]);
    expect(locationsOf(kernel, 'read_file', { path: 'src/a.ts', offset: 40 }, '/p')).toEqual([{ path: '/p/src/a.ts', line: 40 }]);
    expect(locationsOf(kernel, 'edit_file', { path: '/q/b.ts' }, '/p')).toEqual([{ path: '/q/b.ts' }]);
    expect(locationsOf(kernel, 'bash', { command: 'ls' }, '/p')).toEqual([]);
    expect(locationsOf(kernel, 'no_such_tool', {}, '/p')).toEqual([]);
  });

  it('show an edit as a diff of the whole text, output as text, and images as images', () => {
    expect(resultContent('edit_file', { content: 'Edited', display: { path: '/p/a', oldText: 'a\n', newText: 'b\n' } })).toEqual([{ type: 'diff', path: '/p/a', oldText: 'a\n', newText: 'b\n' }]);
    expect(resultContent('write_file', { content: 'Created', display: { path: '/p/n', oldText: null, newText: 'n\n' } })).toEqual([{ type: 'diff', path: '/p/n', oldText: null, newText: 'n\n' }]);
    expect(resultContent('edit_file', { content: 'edit_file: old_string matched 0 times', isError: true, display: { path: '/p/a', newText: 'x' } })).toEqual([
      { type: 'content', content: { type: 'text', text: 'edit_file: old_string matched 0 times' } },
    ]);
    expect(resultContent('bash', { content: 'out\n' })).toEqual([{ type: 'content', content: { type: 'text', text: '```\nout\n```' } }]);
    expect(resultContent('bash', { content: 'has ``` inside' })[0]).toEqual({ type: 'content', content: { type: 'text', text: '````\nhas ``` inside\n````' } });
    expect(resultContent('read_file', { content: [{ type: 'text', text: 'Image a.png' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] })).toEqual([
      { type: 'content', content: { type: 'text', text: 'Image a.png\n[image]' } },
      { type: 'content', content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } },
    ]);
  });
});

describe('prompts', () => {
  it('become Keel content: text, links, embedded text and blobs, images', () => {
    expect(
      toKeelContent([
        { type: 'text', text: 'hi' },
        { type: 'resource_link', uri: 'file:///p/a%20b.ts', name: 'a b.ts' },
        { type: 'resource', resource: { uri: 'file:///p/x.ts', text: 'let x' } },
        { type: 'resource', resource: { uri: 'file:///p/doc.pdf', mimeType: 'application/pdf', blob: 'JVBE' } },
        { type: 'resource', resource: { uri: 'file:///p/pic.gif', mimeType: 'image/gif', blob: 'R0lG' } },
        { type: 'resource', resource: { uri: 'file:///p/data.bin', mimeType: 'application/octet-stream', blob: 'AA' } },
      ]),
    ).toEqual([
      { type: 'text', text: 'hi' },
      { type: 'text', text: 'The user attached /p/a b.ts (a b.ts); read it if it matters.' },
      { type: 'text', text: '<context ref="/p/x.ts">\nlet x\n</context>' },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lG' } },
      { type: 'text', text: 'The user attached /p/data.bin (application/octet-stream, not shown).' },
    ]);
  });

  it('refuse audio, image types the model does not take, and an empty prompt, naming the block', () => {
    const refusal = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return { code: (err as RequestError).code, message: (err as Error).message };
      }
      throw new Error('no error');
    };
    expect(refusal(() => toKeelContent([{ type: 'text', text: 'a' }, { type: 'audio', data: '', mimeType: 'audio/wav' }]))).toEqual({ code: -32602, message: "Invalid params: prompt[1]: audio is not supported (the agent's promptCapabilities.audio is false)" });
    expect(refusal(() => toKeelContent([{ type: 'image', data: '', mimeType: 'image/tiff' }])).message).toContain('prompt[0]: image type image/tiff is not one the model takes');
    expect(refusal(() => toKeelContent([])).message).toContain('prompt: empty');
    expect(refusal(() => toKeelContent([{ type: 'text', text: 'a' }, { type: 'image', data: '', mimeType: 'image/png' }]))).toEqual({ code: -32602, message: 'Invalid params: prompt[1].data: empty (an image needs its base64 data)' });
    expect(refusal(() => toKeelContent([{ type: 'resource', resource: { uri: 'file:///a.pdf', mimeType: 'application/pdf', blob: '' } }])).message).toContain(
      'prompt[0].resource.blob: empty (a resource of type application/pdf needs its base64 data)',
    );
  });
});

describe('history replay', () => {
  it('replays user and agent text, thoughts, tool calls and their results in order', () => {
    const kernel = testKernel([toolsFs(), toolBash()]);
    const updates = replayUpdates(
      kernel,
      [
        { role: 'user', content: 'fix it' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }, { type: 'text', text: 'Running.' }, { type: 'tool_use', id: 't1', name: 'bash', input: { command: 'make' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok', is_error: false }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'read_file', input: { path: 'a.ts' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: 'nope' }], is_error: true }] },
      ],
      '/p',
    );
    expect(updates.map((u) => u.sessionUpdate)).toEqual(['user_message_chunk', 'agent_thought_chunk', 'agent_message_chunk', 'tool_call', 'tool_call_update', 'tool_call', 'tool_call_update']);
    expect(updates[3]).toMatchObject({ toolCallId: 't1', kind: 'execute', title: '`make`' });
    expect(updates[4]).toMatchObject({ status: 'completed', content: [{ type: 'content', content: { type: 'text', text: '```\nok\n```' } }] });
    expect(updates[5]).toMatchObject({ kind: 'read', locations: [{ path: '/p/a.ts' }] });
    expect(updates[6]).toMatchObject({ status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'nope' } }] });
  });
});

describe('session kernels', () => {
  it('take the editor’s MCP servers in Keel’s shape, each named as coming from the editor', () => {
    expect(
      mcpServersOf([
        { name: 'local', command: '/bin/srv', args: ['--x'], env: [{ name: 'TOKEN', value: 't' }] },
        { type: 'http', name: 'remote', url: 'https://mcp.example/mcp', headers: [{ name: 'Authorization', value: 'Bearer t' }] },
        { type: 'sse', name: 'old', url: 'https://mcp.example/sse', headers: [] },
      ]),
    ).toEqual({
      local: { type: 'stdio', command: '/bin/srv', args: ['--x'], env: { TOKEN: 't' } },
      remote: { type: 'http', url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer t' } },
      old: { type: 'sse', url: 'https://mcp.example/sse', headers: {} },
    });
    const base = testKernel([toolsFs(), acp()], { cwd: '/p', projectRoot: '/p', mcpServers: { mine: { command: 'x' } } });
    const kernel = sessionKernel(base, '/p/sub', [{ name: 'local', command: '/bin/srv', args: [], env: [] }]);
    expect(kernel).not.toBe(base);
    expect(kernel.config).toMatchObject({ cwd: '/p/sub', projectRoot: '/p' });
    expect(Object.keys(kernel.config.mcpServers)).toEqual(['mine', 'local']);
    expect(kernel.config.sources['mcpServers.local']).toBe(CLIENT_SOURCE);
    expect(kernel.plugins.map((p) => p.name)).toEqual(base.plugins.map((p) => p.name));
    expect(kernel.state).not.toBe(base.state);
    expect(base.config.mcpServers).toEqual({ mine: { command: 'x' } });
  });

  it('keep the configured project for a folder inside it, a folder named `..x` included; a sibling is its own project', () => {
    const base = testKernel([toolsFs(), acp()], { cwd: '/p', projectRoot: '/p' });
    expect(sessionKernel(base, '/p/..x', []).config.projectRoot).toBe('/p');
    expect(sessionKernel(base, '/p', []).config.projectRoot).toBe('/p');
    expect(sessionKernel(base, '/p2', []).config.projectRoot).toBe('/p2');
  });
});
