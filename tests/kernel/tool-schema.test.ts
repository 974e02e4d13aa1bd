import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../kernel/index.js';
import { apiToolsBytes, toApiTool } from '../../kernel/tool-schema.js';

const input = z.object({ path: z.string().describe('the file'), limit: z.number().int().min(1).optional() }).strict();
const readIt = (description: string) => defineTool({ name: 'read_it', description, permission: 'read', input, execute: async () => ({ content: 'x' }) });

describe('toApiTool', () => {
  it('derives the JSON Schema of an input schema once, for every tool made around it', () => {
    const first = toApiTool(readIt('one kernel'));
    const second = toApiTool(readIt('another kernel'));
    expect(first.input_schema).toEqual({
      type: 'object',
      properties: { path: { type: 'string', description: 'the file' }, limit: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
      required: ['path'],
      additionalProperties: false,
    });
    // The same derived schema, not a second conversion; each tool keeps its own name and description.
    expect(second.input_schema.properties).toBe(first.input_schema.properties);
    expect([first.description, second.description]).toEqual(['one kernel', 'another kernel']);
  });
});

describe('apiToolsBytes', () => {
  it('equals the UTF-8 length of JSON.stringify of the tool list, for none, one and several tools', () => {
    const tool = (name: string, description: string) => toApiTool(defineTool({ name, description, permission: 'read', input: z.object({ path: z.string() }), execute: async () => ({ content: '' }) }));
    const tools = [tool('a', 'plain'), tool('b', 'é 😀 "quoted"'), tool('c', 'third')];
    for (const list of [[], tools.slice(0, 1), tools, [...tools, ...tools]]) {
      expect(apiToolsBytes(list)).toBe(Buffer.byteLength(JSON.stringify(list)));
    }
  });
});
