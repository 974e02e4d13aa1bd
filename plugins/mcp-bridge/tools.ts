/**
 * An MCP tool as a Keel tool: `mcp__<server>__<tool>`, its JSON Schema as is, deferred. Its level is `network`
 * unless the server marks it `readOnlyHint` and the user trusts that hint (policy.ts).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, type ToolDefinition } from '../../kernel/index.js';
import type { Connection } from './connection.js';
import { toToolResult } from './content.js';

const MAX_NAME = 64;
const MAX_DESCRIPTION = 2048;

/** Characters the API refuses in tool names become `_`; the name is cut to 64 characters. */
export function mcpName(server: string, item: string): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');
  return `mcp__${clean(server)}__${clean(item)}`.slice(0, MAX_NAME);
}

/** What the user approves when allowing a tool: its description and schema. */
export function toolHash(tool: Tool): string {
  return createHash('sha256').update(JSON.stringify({ d: tool.description ?? '', s: tool.inputSchema, t: tool.title ?? '' })).digest('hex');
}

const anyObject = z.record(z.string(), z.unknown());

export function toToolDefinition(
  conn: Connection,
  tool: Tool,
  limits: { timeoutMs: number; maxResultBytes: number },
  trustHint: (name: string) => boolean,
): ToolDefinition<Record<string, unknown>> {
  const name = mcpName(conn.name, tool.name);
  const raw = tool.description?.trim() || tool.title || `The ${tool.name} tool`;
  const description = `${raw.length > MAX_DESCRIPTION ? `${raw.slice(0, MAX_DESCRIPTION - 3)}...` : raw} (MCP server ${conn.name})`;
  const { $schema: _drop, ...schema } = tool.inputSchema as Record<string, unknown>;
  return defineTool({
    name,
    description,
    permission: tool.annotations?.readOnlyHint === true && trustHint(name) ? 'read' : 'network',
    input: anyObject,
    jsonSchema: { ...schema, type: 'object' },
    deferLoading: true,
    async execute(input, ctx) {
      const result = await conn.callTool(tool.name, input, {
        signal: ctx.signal,
        timeoutMs: conn.config.timeout ?? limits.timeoutMs,
        onProgress: (p) => ctx.emit({ type: 'mcp_progress', id: ctx.call.id, server: conn.name, tool: tool.name, progress: p.progress, total: p.total, message: p.message }),
      });
      return toToolResult(result, limits.maxResultBytes);
    },
  });
}
