import { open } from 'node:fs/promises';
import type { AppState, ContentBlockParam } from '../../kernel/index.js';

/** About four characters per token: the cap on each re-injected file, in characters. */
const CHARS_PER_TOKEN = 4;

/** The start of a file, at most `maxTokens` worth, or undefined when it cannot be read. */
async function readHead(file: string, maxTokens: number): Promise<{ text: string; truncated: boolean } | undefined> {
  const maxChars = maxTokens * CHARS_PER_TOKEN;
  let handle;
  try {
    handle = await open(file, 'r');
    const buffer = Buffer.alloc(maxChars + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    if (text.includes('\u0000')) return undefined; // binary
    return bytesRead > maxChars ? { text: text.slice(0, maxChars), truncated: true } : { text, truncated: false };
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}

/** The recently read files (newest first, as they are now on disk), each capped at `maxTokens`. */
export async function fileBlocks(paths: readonly string[], maxFiles: number, maxTokens: number): Promise<ContentBlockParam[]> {
  const blocks: ContentBlockParam[] = [];
  for (const file of paths) {
    if (blocks.length >= maxFiles) break;
    const head = await readHead(file, maxTokens);
    if (!head) continue;
    const note = head.truncated ? `\n[… truncated at about ${maxTokens} tokens; read the rest with read_file]` : '';
    blocks.push({ type: 'text', text: `A file you read before this compaction, as it is now: ${file}\n<file path="${file}">\n${head.text}${note}\n</file>` });
  }
  return blocks;
}

export function todoBlock(todos: AppState['todos']): ContentBlockParam | undefined {
  if (!todos.length || todos.every((todo) => todo.status === 'completed')) return undefined;
  const lines = todos.map((todo) => `- [${todo.status}] ${todo.content}`);
  return { type: 'text', text: `Your todo list (still active):\n${lines.join('\n')}` };
}

export function toolsBlock(names: readonly string[]): ContentBlockParam | undefined {
  if (!names.length) return undefined;
  return { type: 'text', text: `Tools you have used in this session: ${names.join(', ')}.` };
}
