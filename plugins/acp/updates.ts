/** How Keel's tool calls and results look as ACP tool calls: a kind, a title, the files they touch, their content. */
import path from 'node:path';
import type { ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import type { Kernel, ToolResult } from '../../kernel/index.js';

const KINDS: Record<string, ToolKind> = {
  read_file: 'read',
  write_file: 'edit',
  edit_file: 'edit',
  notebook_edit: 'edit',
  glob: 'search',
  grep: 'search',
  ls: 'search',
  tool_search: 'search',
  bash: 'execute',
  bash_output: 'execute',
  kill_shell: 'execute',
  web_fetch: 'fetch',
  web_search: 'fetch',
  todo_write: 'think',
  agent: 'think',
  exit_plan_mode: 'switch_mode',
};

type Input = Record<string, unknown>;
const str = (value: unknown): string | undefined => (typeof value === 'string' && value ? value : undefined);
const oneLine = (text: string, max = 80) => {
  const first = text.split('\n')[0]!.trim();
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
};

/** A bash command's own kind: removing files is `delete`, moving them `move`, anything else `execute`. */
export function commandKind(command: string): ToolKind {
  const words = command.trim().split(/\s+/);
  const program = words[0] === 'git' ? `git ${words[1] ?? ''}` : words[0];
  if (program === 'rm' || program === 'rmdir' || program === 'git rm' || program === 'unlink') return 'delete';
  if (program === 'mv' || program === 'git mv') return 'move';
  return 'execute';
}

export function kindOf(name: string, input: unknown): ToolKind {
  if (name === 'bash') return commandKind(str((input as Input | null)?.command) ?? '');
  return KINDS[name] ?? 'other';
}

export function titleOf(name: string, input: unknown, cwd: string): string {
  const i = (typeof input === 'object' && input !== null ? input : {}) as Input;
  const shown = (p: unknown) => (typeof p === 'string' ? (path.isAbsolute(p) ? path.relative(cwd, p) || p : p) : '');
  switch (name) {
    case 'read_file':
      return `Read ${shown(i.path)}`;
    case 'write_file':
      return `Write ${shown(i.path)}`;
    case 'edit_file':
      return `Edit ${shown(i.path)}`;
    case 'notebook_edit':
      return `Edit ${shown(i.notebook_path ?? i.path)}`;
    case 'bash':
      return str(i.command) ? `\`${oneLine(String(i.command))}\`` : 'bash';
    case 'grep':
      return `grep ${JSON.stringify(i.pattern ?? '')}${i.path ? ` in ${shown(i.path)}` : ''}`;
    case 'glob':
      return `glob ${String(i.pattern ?? '')}`;
    case 'ls':
      return `ls ${shown(i.path) || '.'}`;
    case 'web_fetch':
      return `Fetch ${String(i.url ?? '')}`;
    case 'web_search':
      return `Search the web: ${String(i.query ?? '')}`;
    case 'todo_write':
      return 'Update the plan';
    case 'exit_plan_mode':
      return 'Ready to carry out the plan';
    case 'agent':
      return str(i.description) ? `Agent: ${oneLine(String(i.description))}` : 'Agent';
    default:
      return name.startsWith('mcp__') ? name.split('__').slice(1).join(': ') : name;
  }
}

/** The files a call touches, from the tool's own `paths` (what the permission policy checks), absolute. */
export function locationsOf(kernel: Kernel, name: string, input: unknown, cwd: string): ToolCallLocation[] {
  const tool = kernel.tools.get(name);
  let paths: string[] = [];
  try {
    paths = tool?.paths?.(input) ?? [];
  } catch {
    return [];
  }
  const line = name === 'read_file' && typeof (input as Input | null)?.offset === 'number' ? ((input as Input).offset as number) : undefined;
  return paths.filter((p) => typeof p === 'string' && p).map((p) => ({ path: path.resolve(cwd, p), ...(line ? { line } : {}) }));
}

/** A tool result's content as text (images and documents named). */
export function resultText(result: { content: string | ReadonlyArray<{ type: string; text?: string }> }): string {
  if (typeof result.content === 'string') return result.content;
  return result.content.map((block) => (block.type === 'text' ? (block.text ?? '') : `[${block.type}]`)).join('\n');
}

/** What a finished call shows: the diff of an edit (whole old and new text), else its output as text. */
export function resultContent(name: string, result: ToolResult): ToolCallContent[] {
  const display = result.display ?? {};
  if (!result.isError && typeof display.path === 'string' && typeof display.newText === 'string') {
    return [{ type: 'diff', path: display.path, oldText: typeof display.oldText === 'string' ? display.oldText : null, newText: display.newText }];
  }
  const content: ToolCallContent[] = [];
  if (typeof result.content !== 'string') {
    for (const block of result.content) {
      if (block.type === 'image' && block.source.type === 'base64') content.push({ type: 'content', content: { type: 'image', data: block.source.data, mimeType: block.source.media_type } });
    }
  }
  const text = resultText(result);
  if (text) content.unshift({ type: 'content', content: { type: 'text', text: name === 'bash' ? fence(text) : text } });
  return content;
}

/** Output in a code fence, as editors render tool output in Markdown. */
export function fence(text: string): string {
  const ticks = /```/.test(text) ? '````' : '```';
  return `${ticks}\n${text.replace(/\n$/, '')}\n${ticks}`;
}
