/** Shared pieces for the context-management tests: a big-output tool, a window-enforcing script, checks. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type AgentEvent, type MessageParam, type Plugin, type ToolDefinition } from '../../../kernel/index.js';
import type { RecordedRequest, ScriptedTurn } from '../../helpers/anthropic-server.js';

export const SMALL_MODEL = 'claude-small-test';
export const MAIN_MODEL = 'claude-main-test';

/** A tool whose output is `lines` numbered lines (a stand-in for a build log or a grep). */
export const bigTool = defineTool({
  name: 'big_output',
  description: 'Prints many lines',
  permission: 'read',
  input: z.object({ lines: z.number().int(), tag: z.string().optional() }),
  async execute(input) {
    const out: string[] = [];
    for (let i = 1; i <= input.lines; i++) out.push(`${input.tag ?? 'line'} ${i}: ${'x'.repeat(40)}`);
    return { content: out.join('\n') };
  },
});

/** A minimal read_file for tests that must not depend on the file tools being built. */
export const readFileTool = defineTool({
  name: 'read_file',
  description: 'Reads a file',
  permission: 'read',
  input: z.object({ path: z.string() }),
  async execute(input, ctx) {
    return { content: readFileSync(path.resolve(ctx.cwd, input.path), 'utf8') };
  },
});

/** Tokens the scripted server charges for a request: its JSON at four characters a token. */
export function requestTokens(request: RecordedRequest): number {
  const body = request.body as { system?: unknown; messages?: unknown; tools?: unknown };
  return Math.ceil(JSON.stringify({ system: body.system, messages: body.messages, tools: body.tools }).length / 4);
}

/** Answers like the real API would about size: usage from the request, and a 400 over the window. */
export function sized(turn: ScriptedTurn, window: number, overflows?: number[]): (request: RecordedRequest) => ScriptedTurn {
  return (request) => {
    const tokens = requestTokens(request);
    if (tokens > window) {
      overflows?.push(tokens);
      return { status: 400, errorType: 'invalid_request_error', errorMessage: `prompt is too long: ${tokens} tokens > ${window} maximum` };
    }
    return { ...turn, usage: { input_tokens: tokens, output_tokens: 20, ...turn.usage } };
  };
}

export const isSmall = (request: RecordedRequest): boolean => (request.body as { model?: string }).model === SMALL_MODEL;

export const FIVE_SECTIONS = `## Completed tasks
- Ran big_output several times.
## Key findings
- Outputs are numbered lines.
## Current state
- Working through the task.
## Pending work
- Finish the remaining calls.
## Important decisions
- None so far.`;

/** Every tool_result sits right after the assistant message holding its tool_use, and every tool_use is answered. */
export function assertPairsIntact(messages: readonly MessageParam[]): void {
  messages.forEach((message, index) => {
    if (typeof message.content === 'string') return;
    if (message.role === 'user') {
      const results = message.content.filter((b) => b.type === 'tool_result');
      if (!results.length) return;
      const previous = messages[index - 1];
      const uses = previous && previous.role === 'assistant' && Array.isArray(previous.content) ? previous.content.filter((b) => b.type === 'tool_use') : [];
      for (const result of results) {
        if (result.type !== 'tool_result' || !uses.some((u) => u.type === 'tool_use' && u.id === result.tool_use_id)) {
          throw new Error(`orphaned tool_result at message ${index}`);
        }
      }
    } else {
      const uses = message.content.filter((b) => b.type === 'tool_use');
      const next = messages[index + 1];
      if (!uses.length || !next) return;
      const answered = Array.isArray(next.content) ? next.content.filter((b) => b.type === 'tool_result').map((b) => (b.type === 'tool_result' ? b.tool_use_id : '')) : [];
      for (const use of uses) if (use.type === 'tool_use' && !answered.includes(use.id)) throw new Error(`unanswered tool_use at message ${index}`);
    }
  });
}

/** A plugin that records every event (taps must be made before the kernel is sealed). */
export function recorder() {
  const events: AgentEvent[] = [];
  const plugin: Plugin = {
    name: 'test-recorder',
    kernel: '^1.0.0',
    apply(kernel) {
      kernel.hooks.event.tap('test-recorder', (event) => {
        events.push(event);
      });
    },
  };
  const of = <T extends AgentEvent['type']>(type: T) => events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
  return { plugin, events, of };
}

export function textOfMessage(message: MessageParam): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? JSON.stringify(b.content) : '')).join('\n');
}

/** Registers test tools. */
// ToolDefinition's default type argument is `any`: tools of any input shape go in one list.
export function toolsPlugin(...tools: ToolDefinition[]): Plugin {
  return {
    name: 'test-tools',
    kernel: '^1.0.0',
    apply(kernel) {
      for (const tool of tools) kernel.tools.register(tool);
    },
  };
}

/** A seeded generator, so a failing history can be reproduced. */
function rng(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

/** A random but well-formed history: requests, parallel tool calls, text answers. */
export function randomHistory(seed: number, turns: number): MessageParam[] {
  const random = rng(seed);
  const messages: MessageParam[] = [{ role: 'user', content: 'the first request' }];
  let id = 0;
  for (let t = 0; t < turns; t++) {
    const calls = Math.floor(random() * 3);
    if (calls === 0) {
      messages.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${t}` }] });
      if (t < turns - 1) messages.push({ role: 'user', content: `request ${t}` });
      continue;
    }
    const uses = Array.from({ length: calls }, () => ({ type: 'tool_use' as const, id: `tu_${++id}`, name: 'x', input: {} }));
    messages.push({ role: 'assistant', content: uses });
    messages.push({ role: 'user', content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: 'r'.repeat(Math.floor(random() * 500)) })) });
  }
  return messages;
}
