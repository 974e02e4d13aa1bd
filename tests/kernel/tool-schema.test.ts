import { describe, expect, it } from 'vitest';
import { defineTool, toApiTool, z } from '../../kernel/index.js';

const input = z.object({ path: z.string().describe('the file'), limit: z.number().int().min(1).optional() }).strict();
const tool = (description: string) => defineTool({ name: 'read_it', description, permission: 'read', input, execute: async () => ({ content: 'x' }) });

describe('toApiTool', () => {
  it('derives the JSON Schema of an input schema once, for every tool made around it', () => {
    const first = toApiTool(tool('one kernel'));
    const second = toApiTool(tool('another kernel'));
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
