import { z } from 'zod';
import type { AnthropicTool, ToolDefinition } from './types.js';

const schemaCache = new WeakMap<ToolDefinition, AnthropicTool>();

/** The tool as the Messages API wants it; the JSON Schema is derived from zod once per tool. */
export function toApiTool(tool: ToolDefinition): AnthropicTool {
  const cached = schemaCache.get(tool);
  if (cached) return cached;
  if (tool.serverTool) {
    // Server tools have no input schema: the provider defines them by type.
    const server = { ...tool.serverTool } as unknown as AnthropicTool;
    schemaCache.set(tool, server);
    return server;
  }
  const schema = tool.jsonSchema ?? (z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>);
  const { $schema: _drop, ...rest } = schema;
  const api: AnthropicTool = {
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...rest } as AnthropicTool['input_schema'],
  };
  schemaCache.set(tool, api);
  return api;
}

const bytesCache = new WeakMap<AnthropicTool, number>();

/** UTF-8 bytes of `JSON.stringify(tools)`, each tool measured once (API tools are derived once and never changed). */
export function apiToolsBytes(tools: AnthropicTool[]): number {
  let bytes = tools.length > 1 ? tools.length + 1 : 2; // brackets and commas
  for (const tool of tools) {
    let size = bytesCache.get(tool);
    if (size === undefined) bytesCache.set(tool, (size = Buffer.byteLength(JSON.stringify(tool))));
    bytes += size;
  }
  return bytes;
}

/** One line naming each bad field and what was expected, for the model to correct itself. */
export function describeInputError(toolName: string, error: z.ZodError): string {
  const parts = error.issues.map((issue) => {
    const field = issue.path.length ? issue.path.map(String).join('.') : '(input)';
    return `${field}: ${issue.message}`;
  });
  return `Invalid input for tool ${toolName}: ${parts.join('; ')}`;
}
