/** Anthropic-shaped messages and tools → Chat Completions, and finish reasons back. */
import type {
  ChatCompletionContentPart,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
  ChatCompletionMessageFunctionToolCall,
} from 'openai/resources/chat/completions';
import type { AnthropicTool, ContentBlockParam, MessageParam, StopReason, TextBlockParam, ToolResultBlockParam } from '../../kernel/index.js';

export function toChatTools(tools: AnthropicTool[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: tool.input_schema as Record<string, unknown>,
    },
  }));
}

export function toChatMessages(system: TextBlockParam[], messages: MessageParam[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  const systemText = system.map((block) => block.text).join('\n\n');
  if (systemText) out.push({ role: 'system', content: systemText });
  for (const message of messages) {
    if (message.role === 'system') {
      out.push({ role: 'system', content: typeof message.content === 'string' ? message.content : message.content.map((b) => b.text).join('\n\n') });
    } else if (typeof message.content === 'string') {
      out.push({ role: message.role, content: message.content });
    } else if (message.role === 'assistant') {
      out.push(assistantMessage(message.content));
    } else {
      out.push(...userMessages(message.content));
    }
  }
  return out;
}

function assistantMessage(blocks: ContentBlockParam[]): ChatCompletionMessageParam {
  const text = blocks
    .filter((b): b is Extract<ContentBlockParam, { type: 'text' }> => b.type === 'text')
    .map((b) => b.text)
    .join('');
  const toolCalls: ChatCompletionMessageFunctionToolCall[] = blocks
    .filter((b): b is Extract<ContentBlockParam, { type: 'tool_use' }> => b.type === 'tool_use')
    .map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: typeof b.input === 'string' ? b.input : JSON.stringify(b.input ?? {}) } }));
  // Thinking blocks are Anthropic's own and have no Chat Completions counterpart: they stay out.
  return { role: 'assistant', content: text || null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) };
}

/** Tool results become `tool` messages (first, right after the assistant's calls); other parts one user message. */
function userMessages(blocks: ContentBlockParam[]): ChatCompletionMessageParam[] {
  const tools: ChatCompletionMessageParam[] = [];
  const parts: ChatCompletionContentPart[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_result') {
      const { text, images } = toolResultContent(block);
      tools.push({ role: 'tool', tool_call_id: block.tool_use_id, content: text });
      parts.push(...images);
    } else if (block.type === 'text') {
      parts.push({ type: 'text', text: block.text });
    } else if (block.type === 'image') {
      const image = imagePart(block);
      if (image) parts.push(image);
    }
  }
  const out = [...tools];
  if (parts.length > 0) {
    const textOnly = parts.every((p) => p.type === 'text');
    out.push({ role: 'user', content: textOnly ? parts.map((p) => (p as { text: string }).text).join('\n\n') : parts });
  }
  return out;
}

function toolResultContent(block: ToolResultBlockParam): { text: string; images: ChatCompletionContentPart[] } {
  const images: ChatCompletionContentPart[] = [];
  let text: string;
  if (typeof block.content === 'string' || block.content === undefined) {
    text = block.content ?? '';
  } else {
    const texts: string[] = [];
    for (const part of block.content) {
      if (part.type === 'text') texts.push(part.text);
      else if (part.type === 'image') {
        const image = imagePart(part);
        if (image) images.push(image);
      }
    }
    text = texts.join('\n');
  }
  return { text: block.is_error ? `Error: ${text}` : text, images };
}

function imagePart(block: Extract<ContentBlockParam, { type: 'image' }>): ChatCompletionContentPart | undefined {
  const source = block.source as { type: string; media_type?: string; data?: string; url?: string };
  if (source.type === 'base64' && source.data) return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source.type === 'url' && source.url) return { type: 'image_url', image_url: { url: source.url } };
  return undefined;
}

/** Chat Completions finish reasons as Messages API stop reasons. Tool calls win over a server's plain `stop`. */
export function toStopReason(finish: string, hasToolCalls: boolean): StopReason {
  if (hasToolCalls && (finish === 'tool_calls' || finish === 'function_call' || finish === 'stop')) return 'tool_use';
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
    case 'function_call':
      return hasToolCalls ? 'tool_use' : 'end_turn';
    default:
      return 'end_turn';
  }
}
