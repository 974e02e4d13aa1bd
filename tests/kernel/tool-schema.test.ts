import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../kernel/index.js';
import { apiToolsBytes, toApiTool } from '../../kernel/tool-schema.js';

describe('apiToolsBytes', () => {
  it('equals the UTF-8 length of JSON.stringify of the tool list, for none, one and several tools', () => {
    const tool = (name: string, description: string) => toApiTool(defineTool({ name, description, permission: 'read', input: z.object({ path: z.string() }), execute: async () => ({ content: '' }) }));
    const tools = [tool('a', 'plain'), tool('b', 'é 😀 "quoted"'), tool('c', 'third')];
    for (const list of [[], tools.slice(0, 1), tools, [...tools, ...tools]]) {
      expect(apiToolsBytes(list)).toBe(Buffer.byteLength(JSON.stringify(list)));
    }
  });
});
