import { z } from 'zod';
import type { AnthropicTool, ToolDefinition } from './types.js';

const schemaCache = new WeakMap<ToolDefinition, AnthropicTool>();
/**
 * JSON Schemas by zod schema: a plugin that registers its tools in `apply` makes new tool objects per kernel, usually
 * around one module-level input schema, so the conversion (a few ms for the built-in tools) runs once per process
 * (and, for the built-in tools, once at build time: the binary's start-up snapshot holds the result).
 */
const jsonSchemaCache = new WeakMap<object, Record<string, unknown>>();

function jsonSchemaOf(input: ToolDefinition['input']): Record<string, unknown> {
  let schema = jsonSchemaCache.get(input);
  if (!schema) {
    const { $schema: _drop, ...rest } = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    schema = rest;
    jsonSchemaCache.set(input, schema);
  }
  return schema;
}

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
  const { $schema: _drop, ...rest } = tool.jsonSchema ?? jsonSchemaOf(tool.input);
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
