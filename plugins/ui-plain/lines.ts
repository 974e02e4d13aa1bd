/** Plain-text renderings of events: one line per tool call, results and diffs collapsed, notices spelled out. */
import type { AgentEvent, ToolCall, ToolResult } from '../../kernel/index.js';

export function keyArgument(call: ToolCall): string {
  const input = (call.input ?? {}) as Record<string, unknown>;
  for (const key of ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description', 'prompt']) {
    const value = input[key];
    if (typeof value === 'string' && value) return value.replace(/\s*\n\s*/g, ' ').slice(0, 100);
  }
  return '';
}

export function callLine(call: ToolCall): string {
  const arg = keyArgument(call);
  return `${call.name}${arg ? `: ${arg}` : ''}`;
}

function text(result: ToolResult): string {
  if (typeof result.content === 'string') return result.content;
  return result.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

export function collapse(body: string, max: number): string[] {
  const lines = body.replace(/\s+$/, '').split('\n');
  return lines.length <= max ? lines : [...lines.slice(0, max), `... +${lines.length - max} lines`];
}

export function resultLines(call: ToolCall, result: ToolResult): string[] {
  const diff = result.display?.diff;
  const body = typeof diff === 'string' && diff && !result.isError ? collapse(diff, 20) : collapse(text(result), result.isError ? 6 : 4);
  const head = `[${result.isError ? 'failed' : 'done'}] ${callLine(call)}`;
  return [head, ...body.filter((l, i) => l !== '' || i > 0).map((l) => `  | ${l}`)];
}

export function retryLine(event: Extract<AgentEvent, { type: 'retry' }>): string {
  const wait = event.delayMs >= 1000 ? `${(event.delayMs / 1000).toFixed(event.delayMs % 1000 === 0 ? 0 : 1)} s` : `${event.delayMs} ms`;
  return `[retry] Retrying in ${wait} (${event.attempt}/${event.maxRetries}): ${event.cause}`;
}
