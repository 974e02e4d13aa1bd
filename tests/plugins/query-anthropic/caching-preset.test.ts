/**
 * Prompt caching with the default preset's plugins: system-prompt, instructions, memory-index, tool-search and
 * context-budget all add to the request, and the cached prefix (the deferred-tool list included) must still be
 * byte-stable across three turns, even when the memory index changes mid-session.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { assemble } from '../../../cli/main.js';
import { runAgent, startSession } from '../../../kernel/index.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let server: ScriptedServer | undefined;
let ws: Workspace | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
  server = undefined;
  ws = undefined;
});

/** Request bodies are raw JSON from the wire, hence the loose types. */
type Body = { tools: Array<Record<string, unknown>>; system: Array<{ text: string; cache_control?: unknown }>; messages: Array<{ content: unknown }> };

function breakpointCount(body: Body): number {
  return JSON.stringify(body).split('"cache_control"').length - 1;
}

const strip = (value: unknown): string => JSON.stringify(value, (key, v) => (key === 'cache_control' ? undefined : v));

describe('prompt caching with the default preset', () => {
  it('keeps tools and the stable system prefix byte-identical over three turns; the memory index sits after the breakpoint', async () => {
    ws = makeWorkspace({ git: true });
    ws.write('AGENTS.md', 'Indent with tabs.\n');
    ws.write('.keel/MEMORY.md', '- style → memory/style.md (formatting rules)\n');
    server = await startAnthropicServer([
      callTool('read_file', { path: 'AGENTS.md' }, 'toolu_read'),
      say('The project indents with tabs.'),
      callTool('ls', { path: '.' }, 'toolu_ls'),
      say('Two files.'),
      say('Third turn, nothing to do.'),
    ]);
    const env = { KEEL_HOME: ws.home, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'test-key' };
    const kernel = await assemble({ outputFormat: 'text', inputFormat: 'text', permissionMode: 'auto', trust: true }, env, undefined, ws.dir);
    const session = await startSession(kernel, {});
    for (const prompt of ['what does AGENTS.md say?', 'list the files', 'anything else?']) {
      const result = await runAgent(kernel, session, prompt);
      expect(result.isError, result.error).toBe(false);
      // Between turns the memory index changes on disk (the agent or the user edits it).
      ws.write('.keel/MEMORY.md', `- style → memory/style.md (tabs, not spaces; after "${prompt}")\n`);
    }

    const bodies = server.messageRequests().map((r) => r.body as Body);
    expect(bodies).toHaveLength(5);
    const stablePrefixes = bodies.map((body) => {
      expect(breakpointCount(body)).toBeLessThanOrEqual(4);
      expect(body.tools.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
      expect(body.tools.slice(0, -1).every((t) => t.cache_control === undefined)).toBe(true);
      const marked = body.system.flatMap((block, i) => (block.cache_control ? [i] : []));
      const instructions = body.system.findIndex((b) => b.text.startsWith('# Instructions'));
      const deferred = body.system.findIndex((b) => b.text.startsWith('Deferred tools'));
      const memory = body.system.findIndex((b) => b.text.startsWith('# Memory'));
      // The breakpoint closes the stable part (base prompt, environment, AGENTS.md, the deferred-tool list); the
      // memory index follows it.
      expect(instructions).toBeGreaterThan(0);
      expect(deferred).toBe(instructions + 1);
      expect(marked).toEqual([deferred]);
      expect(memory).toBeGreaterThan(deferred);
      expect(JSON.stringify(body.system)).not.toMatch(/\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}:\d{2}/);
      return JSON.stringify({ tools: body.tools, system: body.system.slice(0, deferred + 1) });
    });
    // Byte-identical cached prefix (breakpoints included) on every request of every turn.
    for (const prefix of stablePrefixes) expect(prefix).toBe(stablePrefixes[0]);

    // The memory index did change mid-session: only the part after the breakpoint moved.
    const memoryOf = (body: Body) => body.system.find((b) => b.text.startsWith('# Memory'))!.text;
    expect(memoryOf(bodies[0])).toContain('(formatting rules)');
    expect(memoryOf(bodies[2])).toContain('after "what does AGENTS.md say?"');
    expect(memoryOf(bodies[4])).toContain('after "list the files"');

    // Messages: each request's messages are a byte-identical prefix of the next one's (breakpoints aside).
    for (let k = 0; k + 1 < bodies.length; k++) {
      const before = JSON.parse(strip(bodies[k].messages)) as unknown[];
      const after = JSON.parse(strip(bodies[k + 1].messages)) as unknown[];
      expect(JSON.stringify(after.slice(0, before.length))).toBe(JSON.stringify(before));
    }
    // The rolling breakpoint: the latest message of each request is marked.
    for (const body of bodies) expect(JSON.stringify(body.messages.at(-1))).toContain('"cache_control"');
  });
});
