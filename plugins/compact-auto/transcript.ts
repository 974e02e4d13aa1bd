import type { ContentBlockParam, MessageParam } from '../../kernel/index.js';

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters omitted …]\n${text.slice(-half)}`;
}

function renderBlock(block: ContentBlockParam, maxResultChars: number): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'tool_use':
      return `[called ${block.name} ${clip(JSON.stringify(block.input ?? {}), 1000)}]`;
    case 'tool_result': {
      const content = block.content;
      const text =
        content === undefined ? '' : typeof content === 'string' ? content : content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
      return `[result${block.is_error ? ' (error)' : ''}: ${clip(text, maxResultChars)}]`;
    }
    case 'thinking':
    case 'redacted_thinking':
      return '';
    default:
      return `[${block.type}]`;
  }
}

/**
 * The history as plain text for the summariser: tool results clipped, and when the whole is still too long,
 * its middle left out (the start holds the original request, the end the current state).
 */
export function renderTranscript(messages: readonly MessageParam[], opts: { maxResultChars: number; maxChars: number }): string {
  const parts = messages.map((message) => {
    const label = message.role === 'user' ? 'User' : 'Assistant';
    const body =
      typeof message.content === 'string'
        ? message.content
        : message.content
            .map((block) => renderBlock(block, opts.maxResultChars))
            .filter(Boolean)
            .join('\n');
    return `${label}: ${body}`;
  });
  const text = parts.join('\n\n');
  if (text.length <= opts.maxChars) return text;
  const head = Math.floor(opts.maxChars * 0.2);
  const tail = opts.maxChars - head;
  return `${text.slice(0, head)}\n\n[… ${text.length - opts.maxChars} characters of the middle of the conversation omitted …]\n\n${text.slice(-tail)}`;
}
