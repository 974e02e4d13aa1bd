/** MCP tool results as Keel tool results: content blocks mapped, `isError` kept, the size capped per call. */
import type { ImageBlockParam, TextBlockParam, ToolResult } from '../../kernel/index.js';

/** The parts of an MCP `CallToolResult` used here (the SDK's type is looser than this on purpose). */
export interface McpCallResult {
  content?: McpContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  toolResult?: unknown;
}

export type McpContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string }
  | { type: 'audio'; data: string; mimeType: string }
  | { type: 'resource_link'; uri: string; name?: string; description?: string; mimeType?: string }
  | { type: 'resource'; resource: { uri: string; mimeType?: string; text?: string; blob?: string } }
  | { type: string; [key: string]: unknown };

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

type Block = TextBlockParam | ImageBlockParam;

const text = (value: string): TextBlockParam => ({ type: 'text', text: value });
const base64Bytes = (data: string) => Math.floor((data.length * 3) / 4);

function image(data: string, mimeType: string): ImageBlockParam {
  return { type: 'image', source: { type: 'base64', media_type: mimeType as 'image/png', data } };
}

function mapBlock(block: McpContent): Block {
  switch (block.type) {
    case 'text':
      return text(String((block as { text: unknown }).text ?? ''));
    case 'image': {
      const { data, mimeType } = block as { data: string; mimeType: string };
      return IMAGE_TYPES.has(mimeType) ? image(data, mimeType) : text(`[image of type ${mimeType}, ${base64Bytes(data)} bytes, not shown: unsupported type]`);
    }
    case 'audio': {
      const { data, mimeType } = block as { data: string; mimeType: string };
      return text(`[audio of type ${mimeType}, ${base64Bytes(data)} bytes: audio cannot be shown to the model]`);
    }
    case 'resource_link': {
      const link = block as { uri: string; name?: string; description?: string; mimeType?: string };
      const details = [link.mimeType, link.description].filter(Boolean).join('; ');
      return text(`[resource link: ${link.name ? `${link.name} ` : ''}${link.uri}${details ? ` (${details})` : ''}]`);
    }
    case 'resource': {
      const resource = (block as { resource: { uri: string; mimeType?: string; text?: string; blob?: string } }).resource;
      if (typeof resource.text === 'string') return text(`[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}]\n${resource.text}`);
      if (resource.blob && resource.mimeType && IMAGE_TYPES.has(resource.mimeType)) return image(resource.blob, resource.mimeType);
      return text(`[binary resource ${resource.uri}${resource.mimeType ? ` of type ${resource.mimeType}` : ''}, ${base64Bytes(resource.blob ?? '')} bytes, not shown]`);
    }
    default:
      return text(`[content of type ${block.type}, not shown]`);
  }
}

const blockBytes = (block: Block) => (block.type === 'text' ? Buffer.byteLength(block.text) : (block.source as { data?: string }).data?.length ?? 0);

/**
 * Maps the result and cuts it at `maxBytes`: text is cut with a note saying how much was left out, images past
 * the cap are replaced by a note. What is left goes on through the `toolResult` tiers like any output.
 */
export function toToolResult(result: McpCallResult, maxBytes: number): ToolResult {
  let blocks: Block[] = (result.content ?? []).map(mapBlock);
  if (blocks.length === 0 && result.structuredContent !== undefined) blocks = [text(JSON.stringify(result.structuredContent, null, 2))];
  if (blocks.length === 0 && result.toolResult !== undefined) blocks = [text(JSON.stringify(result.toolResult))];
  const total = blocks.reduce((sum, block) => sum + blockBytes(block), 0);
  let room = maxBytes;
  const kept: Block[] = [];
  for (const block of blocks) {
    const size = blockBytes(block);
    if (size <= room) {
      kept.push(block);
      room -= size;
    } else if (block.type === 'text' && room > 0) {
      kept.push(text(Buffer.from(block.text).subarray(0, room).toString('utf8').replace(/\uFFFD$/, '')));
      room = 0;
    } else {
      room = 0;
    }
  }
  if (total > maxBytes) kept.push(text(`[The MCP result was ${total} bytes; it was cut at the per-call cap of ${maxBytes} bytes.]`));
  const display: Record<string, unknown> = {};
  if (result.structuredContent !== undefined) display.structuredContent = result.structuredContent;
  if (total > maxBytes) display.mcpBytes = total;
  const content = kept.length === 1 && kept[0]!.type === 'text' ? kept[0]!.text : kept.length === 0 ? '(no output)' : kept;
  return { content, isError: result.isError ? true : undefined, display: Object.keys(display).length ? display : undefined };
}
