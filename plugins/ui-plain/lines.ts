/** Plain-text renderings of events: one line per tool call, results and diffs collapsed, notices spelled out. */
import { visibleControls, type AgentEvent, type MessageParam, type Services, type PermissionChoice, type ToolCall, type ToolResult } from '../../kernel/index.js';

/** Colours and text styles (SGR): this UI draws none, so a command's are taken out. */
const STYLES = /\x1b\[[0-9;:]*m/g;

/**
 * Text safe to print as plain lines. Colour and style sequences are taken out (this UI draws none); every other
 * escape sequence (cursor moves, erase line, window titles, the clipboard's OSC 52) and control character is shown
 * in caret notation (`^[`, `^M`), never obeyed, as the Ink UI and `keel -p` on a terminal show them; the
 * bidirectional overrides and isolates that reorder what is shown (Trojan Source) as `<U+202E>`; newlines and tabs
 * stay.
 */
export function clean(text: string): string {
  return visibleControls(text.replace(STYLES, ''));
}

/** The start of a colour sequence or of a CRLF, cut off at the end of a delta (bounded: a longer one is no colour). */
const CUT_OFF = /(?:\x1b(?:\[[0-9;:]{0,32})?|\r)$/;

/** `clean` for the answer's deltas: a colour sequence or CRLF split between two deltas is cleaned as one. */
export class StreamCleaner {
  private held = '';

  push(delta: string): string {
    const text = this.held + delta;
    const cut = CUT_OFF.exec(text);
    this.held = cut ? cut[0] : '';
    return clean(cut ? text.slice(0, cut.index) : text);
  }

  /** What is held back, cleaned: the stream ended (or something else is printed) before the sequence did. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return clean(rest);
  }
}

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
  if (typeof result.content === 'string') return clean(result.content);
  return clean(result.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n'));
}

export function collapse(body: string, max: number): string[] {
  const lines = body.replace(/\s+$/, '').split('\n');
  return lines.length <= max ? lines : [...lines.slice(0, max), `... +${lines.length - max} ${lines.length - max === 1 ? 'line' : 'lines'}`];
}

export function resultLines(call: ToolCall, result: ToolResult): string[] {
  const diff = result.display?.diff;
  const body = typeof diff === 'string' && diff && !result.isError ? collapse(clean(diff), 20) : collapse(text(result), result.isError ? 6 : 4);
  const head = `[${result.isError ? 'failed' : 'done'}] ${callLine(call)}`;
  return [head, ...body.filter((l, i) => l !== '' || i > 0).map((l) => `  | ${l}`)];
}

export function retryLine(event: Extract<AgentEvent, { type: 'retry' }>): string {
  const wait = event.delayMs >= 1000 ? `${(event.delayMs / 1000).toFixed(event.delayMs % 1000 === 0 ? 0 : 1)} s` : `${event.delayMs} ms`;
  return `[retry] Retrying in ${wait} (${event.attempt}/${event.maxRetries}): ${event.cause}`;
}

/** What "Deny, and don't ask again" left behind: a session deny rule that /permissions lists and removes. */
export function denyRuleNote(tool: string): string {
  return `deny rule ${tool} added for this session; /permissions remove ${tool} lifts it`;
}

export const LABELS: Record<PermissionChoice, string> = { allow_once: 'Allow once', allow_session: 'Allow this session', deny: 'Deny', deny_session: "Deny, and don't ask again" };

/** Events some plugins add (web search, permission mode changes), read by shape: no plugin is imported. */
interface WebSearchEvent {
  type: 'web_search';
  query: string;
  results: Array<{ title: string; url: string }>;
}
interface ModeEvent {
  type: 'permission_mode';
  to: string;
  reason: string;
}

function isWebSearch(event: { type: string }): event is WebSearchEvent {
  const e = event as Partial<WebSearchEvent>;
  return event.type === 'web_search' && typeof e.query === 'string' && Array.isArray(e.results);
}

function isModeChange(event: { type: string }): event is ModeEvent {
  return event.type === 'permission_mode' && typeof (event as Partial<ModeEvent>).to === 'string';
}

/** The lines an event prints (none for the events the UI does not show). Text deltas are streamed apart. */
export function eventLines(event: AgentEvent): string[] {
  switch (event.type) {
    case 'withdraw':
      return [`[retry] the answer above was cut off: ${event.reason}`];
    case 'tool_start':
      return [`[tool] ${callLine(event.call)}`];
    case 'tool_output':
      return clean(event.chunk).replace(/\n$/, '').split('\n').map((line) => `  > ${line}`);
    case 'tool_end':
      return resultLines(event.call, event.result);
    case 'permission':
      if (event.source === 'user') return [`[permission] ${callLine(event.call)}: ${event.choice ? LABELS[event.choice] : event.decision.behavior}${event.choice === 'deny_session' ? ` (${denyRuleNote(event.call.name)})` : ''}`];
      return event.decision.behavior === 'deny' ? [`[denied] ${callLine(event.call)}: ${event.decision.reason}`] : [];
    case 'retry':
      return [retryLine(event)];
    case 'compact':
      // /compact says what it did itself: one line per event.
      if (event.trigger === 'manual') return [];
      return [`[compact] Context compacted (${event.trigger}): ${event.preTokens} -> ${event.postTokens} tokens`];
    case 'refusal':
      return [`[error] The model refused: ${event.text}`];
    case 'log':
      return event.level === 'error' || event.level === 'warn' ? [`[${event.level}] ${event.message}`] : [];
    case 'result':
      if (event.result.aborted) return ['[interrupted]'];
      return event.result.isError ? [`[error] ${event.result.error ?? event.result.subtype}`] : [];
    default:
      break;
  }
  if (isWebSearch(event)) {
    const shown = event.results.slice(0, 5).map((r) => `  - ${r.title || r.url} <${r.url}>`);
    const more = event.results.length > shown.length ? [`  ... +${event.results.length - shown.length} more`] : [];
    return [`[web search] "${event.query}": ${event.results.length} result${event.results.length === 1 ? '' : 's'}`, ...shown, ...more];
  }
  if (isModeChange(event)) return [`[mode] Permission mode: ${event.to} (${event.reason})`];
  return [];
}

export function todoLines(todos: Array<{ content: string; status: string }>): string[] {
  return todos.length === 0 ? [] : ['[todos]', ...todos.map((t) => `  [${t.status === 'completed' ? 'x' : t.status === 'in_progress' ? '>' : ' '}] ${t.content}`)];
}

/**
 * The lines one message of a resumed conversation prints: prompts as `> `, answers as text, one line per tool call
 * (none for a message shown as nothing, e.g. tool results).
 */
export function messageLines(message: MessageParam, userItems: Services['transcript']['userItems']): string[] {
  const out: string[] = [];
  const blocks = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
  if (message.role === 'user') {
    for (const item of userItems(message)) {
      if (item.kind === 'prompt') out.push(`> ${item.text.split('\n').join('\n  ')}`);
      else if (item.kind === 'shell') out.push(`! ${item.text}`);
      else out.push('[summary] The earlier conversation, compacted:', ...item.text.split('\n').map((l) => `  | ${l}`));
    }
  }
  for (const block of blocks) {
    if (block.type === 'text' && message.role === 'user') continue;
    else if (block.type === 'text') out.push(block.text.replace(/\s+$/, ''));
    else if (block.type === 'tool_use') out.push(`[tool] ${callLine({ id: block.id, name: block.name, input: block.input })}`);
  }
  return out;
}

/**
 * Calls that never ran (a policy denial, an invalid input, an unknown tool) have no tool events of their own:
 * their error result, seen in `tool_results`, becomes a `[not run]` line. Calls the user was asked about
 * already have their `[permission]` line.
 */
export class CallsNotRun {
  private waiting = new Map<string, ToolCall>();

  lines(event: AgentEvent): string[] {
    if (event.type === 'assistant_message') {
      const content = event.message.content;
      if (typeof content !== 'string') for (const b of content) if (b.type === 'tool_use') this.waiting.set(b.id, { id: b.id, name: b.name, input: b.input });
      return [];
    }
    if (event.type === 'tool_start' || event.type === 'permission') {
      this.waiting.delete(event.call.id);
      return [];
    }
    if (event.type !== 'tool_results' || typeof event.message.content === 'string') return [];
    const out: string[] = [];
    for (const block of event.message.content) {
      if (block.type !== 'tool_result') continue;
      const call = this.waiting.get(block.tool_use_id);
      this.waiting.delete(block.tool_use_id);
      if (!call || !block.is_error) continue;
      const body = typeof block.content === 'string' ? block.content : (block.content ?? []).map((b) => (b.type === 'text' ? b.text : '')).join(' ');
      out.push(`[not run] ${callLine(call)}: ${clean(body).replace(/\s*\n\s*/g, ' ')}`);
    }
    return out;
  }
}
