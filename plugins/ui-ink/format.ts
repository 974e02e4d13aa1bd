/** One-line summaries of tool calls, collapsed results, coloured diffs and notices, as pre-rendered lines. */
import type { ToolCall, ToolResult } from '../../kernel/index.js';
import type { Glyphs } from './glyphs.js';
import type { Paint } from './style.js';
import { visibleControls } from './safe-text.js';

/** The argument that says what a call does: the command, the path, the pattern, the URL. */
export function keyArgument(call: ToolCall): string {
  const input = (call.input ?? {}) as Record<string, unknown>;
  // A plan is printed in full on its own; a title line needs none of it.
  if (call.name === 'exit_plan_mode') return '';
  const asked = Array.isArray(input.questions) ? (input.questions[0] as { question?: unknown } | undefined) : undefined;
  if (typeof asked?.question === 'string') return oneLine(asked.question, 80);
  for (const key of ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description', 'prompt']) {
    const value = input[key];
    if (typeof value === 'string' && value) return oneLine(value, 80);
  }
  const first = Object.values(input).find((v) => typeof v === 'string') as string | undefined;
  return first ? oneLine(first, 80) : '';
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function toolTitle(call: ToolCall, paint: Paint): string {
  const arg = keyArgument(call);
  return `${paint.bold(call.name)}${arg ? `(${arg})` : ''}`;
}

/** The text of a result's content blocks. */
export function resultText(result: ToolResult): string {
  const text = typeof result.content === 'string' ? result.content : result.content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('\n');
  return visibleControls(text);
}

/** What the line that counts a collapsed result's hidden lines says about the key that shows them (App.tsx). */
export const EXPAND_HINT = 'ctrl+o to expand';

/** A result collapsed to its first lines, with a count of the rest (and, given, the key that shows them). */
export function collapse(text: string, maxLines: number, hint?: string): string[] {
  const lines = text.replace(/\s+$/, '').split('\n');
  if (lines.length <= maxLines) return lines;
  const rest = lines.length - maxLines;
  return [...lines.slice(0, maxLines), `… +${rest} ${rest === 1 ? 'line' : 'lines'}${hint ? ` (${hint})` : ''}`];
}

/** How a result's lines are coloured: a diff's by what each line is, an error's red, other output dim. */
export type OutputKind = 'diff' | 'error' | 'output';

export function paintOutputLine(kind: OutputKind, line: string, paint: Paint, text = line): string {
  if (kind === 'error') return paint.red(text);
  if (kind === 'output') return paint.dim(text);
  if (line.startsWith('+++') || line.startsWith('---')) return paint.bold(text);
  if (line.startsWith('+')) return paint.green(text);
  if (line.startsWith('-')) return paint.red(text);
  if (line.startsWith('@@')) return paint.cyan(text);
  return paint.dim(text);
}

/** A unified diff, coloured: additions green, removals red, hunk headers cyan. */
export function colorDiff(diff: string, paint: Paint, maxLines: number, hint?: string): string[] {
  return collapse(diff, maxLines, hint).map((line) => paintOutputLine('diff', line, paint));
}

/** A finished call's result as lines, uncoloured: all of them, and how many are shown before it collapses. */
export function resultLines(result: ToolResult): { kind: OutputKind; lines: string[]; shown: number } {
  const display = result.display ?? {};
  if (typeof display.diff === 'string' && display.diff && !result.isError) return { kind: 'diff', lines: visibleControls(display.diff).replace(/\s+$/, '').split('\n'), shown: 20 };
  const lines = resultText(result).replace(/\s+$/, '').split('\n');
  // The user's own answers (ask_user_question) are shown whole: they typed them.
  if (Array.isArray(display.answers)) return { kind: result.isError ? 'error' : 'output', lines, shown: Infinity };
  return { kind: result.isError ? 'error' : 'output', lines, shown: result.isError ? 6 : 4 };
}

/** The finished call: its title line, then its result (or diff) indented under it, collapsed with the key that expands it. */
export function toolBlock(call: ToolCall, result: ToolResult, glyphs: Glyphs, paint: Paint): string[] {
  const mark = result.isError ? paint.red(glyphs.bullet) : paint.green(glyphs.bullet);
  const head = `${mark} ${toolTitle(call, paint)}`;
  const { kind, lines, shown } = resultLines(result);
  const body = collapse(lines.join('\n'), shown, EXPAND_HINT).map((line) => paintOutputLine(kind, line, paint));
  if (body.length === 0 || (body.length === 1 && !body[0])) return [head];
  return [head, ...body.map((line, i) => `  ${i === 0 ? paint.dim(glyphs.result) : ' '} ${line}`)];
}

/** "Retrying in 2 s (1/3): overloaded" */
export function retryNotice(attempt: number, maxRetries: number, delayMs: number, cause: string): string {
  const wait = delayMs >= 1000 ? `${(delayMs / 1000).toFixed(delayMs % 1000 === 0 ? 0 : 1)} s` : `${delayMs} ms`;
  return `Retrying in ${wait} (${attempt}/${maxRetries}): ${cause}`;
}

export function formatTokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k` : String(n);
}

export function formatElapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
}

/**
 * `text` wrapped at word boundaries to `width` columns, the lines after the first indented by `indent` spaces:
 * a /help description continues under itself, not at column 0. A word longer than the room is left whole.
 */
export function hangingWrap(text: string, indent: number, width: number): string[] {
  const room = Math.max(20, width - indent);
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line || lines.length === 0) lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : `${' '.repeat(indent)}${l}`));
}
