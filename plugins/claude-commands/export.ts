/** `/export [file]`: the conversation as Markdown, to a file or as the command's output. */
import type { ContentBlockParam, MessageParam, Session } from '../../kernel/index.js';

/** What /export uses of the file tools' `safe-files` service (plugin tools-fs). */
export interface FileCreator {
  realTarget(abs: string): Promise<string>;
  create(real: string, bytes: Buffer, opts: { shown: string; mode: number }): Promise<void>;
}

/** A code fence longer than any run of backticks in `text`, so the text cannot close it. */
function fence(text: string, lang = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const bar = '`'.repeat(longest + 1);
  return `${bar}${lang}\n${text.replace(/\n$/, '')}\n${bar}`;
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b: { type: string; text?: string }) => (b.type === 'text' ? (b.text ?? '') : `[${b.type}]`)).join('\n');
}

function blockMarkdown(block: ContentBlockParam): string | undefined {
  switch (block.type) {
    case 'text':
      return block.text.trim() ? block.text.trim() : undefined;
    case 'tool_use':
      return `**Tool call: ${block.name}**\n\n${fence(JSON.stringify(block.input, null, 2), 'json')}`;
    case 'tool_result':
      return `**Result${block.is_error ? ' (error)' : ''}**\n\n${fence(resultText(block.content))}`;
    case 'image':
      return '*[image]*';
    case 'document':
      return '*[document]*';
    case 'thinking':
    case 'redacted_thinking':
      return undefined;
    default:
      return `*[${block.type}]*`;
  }
}

function messageMarkdown(message: MessageParam): string | undefined {
  const parts = typeof message.content === 'string' ? [message.content.trim()] : message.content.map(blockMarkdown);
  const body = parts.filter((p): p is string => Boolean(p)).join('\n\n');
  if (!body) return undefined;
  // A user message that only carries tool results belongs to the assistant's turn.
  const onlyResults = typeof message.content !== 'string' && message.content.every((b) => b.type === 'tool_result');
  return onlyResults ? body : `## ${message.role === 'user' ? 'User' : 'Assistant'}\n\n${body}`;
}

export function conversationMarkdown(session: Session, now = new Date()): string {
  const head = [`# Keel session ${session.id}`, '', `- Project: ${session.projectRoot}`, `- Model: ${session.model}`, `- Exported: ${now.toISOString()}`];
  const body = session.messages.map(messageMarkdown).filter((m): m is string => Boolean(m));
  return `${[head.join('\n'), ...(body.length ? body : ['*No messages yet.*'])].join('\n\n')}\n`;
}

/** Writes the export whole or not at all; an existing file is never replaced (the user names another). */
export async function writeExport(files: FileCreator, file: string, text: string): Promise<void> {
  try {
    await files.create(await files.realTarget(file), Buffer.from(text), { shown: file, mode: 0o644 });
  } catch (err) {
    if ((err as { kind?: string }).kind === 'exists') throw new Error(`${file} already exists; name another file`);
    throw err;
  }
}
