/**
 * The screen's model, fed by agent events: finished lines (written once to the terminal's scrollback through
 * Ink's <Static>) and the small live part (the answer's unfinished line, running tools, a retry wait, the
 * spinner's numbers). Listeners are told at most once per frame, however fast tokens arrive.
 */
import type { AgentEvent, MessageParam, Services, ToolCall, ToolResult } from '../../kernel/index.js';
import { MarkdownStream } from './markdown.js';
import { formatTokens, resultLines, retryNotice, toolBlock, toolTitle, type OutputKind } from './format.js';
import type { Glyphs } from './glyphs.js';
import { modeChangeLine, webSearchLine, webSearchOf } from './notices.js';
import type { Paint } from './style.js';
import { PASTE_MIN_LINES } from './paste.js';
import { visibleInside } from './safe-text.js';

/** Events whose text the transcript does not show (or, for a session, would copy whole for nothing). */
const SHOWN_RAW = new Set<AgentEvent['type']>(['session_start', 'assistant_message', 'tool_results', 'usage', 'tools_bytes']);

/** Lines of a resumed prompt shown in full; a longer one (a large paste) shows its start and how much follows. */
const RESUMED_PROMPT_LINES = PASTE_MIN_LINES * 2;
const RESUMED_PROMPT_CHARS = 4000;

/** A resumed prompt as the transcript shows it: a very large one is cut, so resuming never lays out a 1 MB paste. */
function shownPrompt(text: string): string {
  let lineEnd = -1;
  for (let i = 0; i < RESUMED_PROMPT_LINES && lineEnd < text.length; i++) {
    const next = text.indexOf('\n', lineEnd + 1);
    lineEnd = next < 0 ? text.length : next;
  }
  const cut = Math.min(lineEnd, RESUMED_PROMPT_CHARS);
  if (cut >= text.length) return text;
  let rest = 1;
  for (let i = text.indexOf('\n', cut); i >= 0; i = text.indexOf('\n', i + 1)) rest++;
  return `${text.slice(0, cut)}\n[… ${rest.toLocaleString('en-US')} more ${rest === 1 ? 'line' : 'lines'} not shown]`;
}

/** The title a plan is shown under: its own first heading when that names it a plan, else "Plan". */
export function planTitle(plan: string): { title: string; body: string } {
  const match = /^(?:[ \t]*\n)*#{1,6}[ \t]+(plan\b[^\n]*?)[ \t#]*(?:\n|$)/i.exec(plan);
  if (!match) return { title: 'Plan', body: plan };
  return { title: match[1].trim(), body: plan.slice(match[0].length).replace(/^(?:[ \t]*\n)+/, '') };
}

export interface StaticItem {
  id: number;
  text: string;
}

/** What one frame shows: lines to print above the live region (each frame's batch is printed once). */
export interface Frame {
  version: number;
  staticKey: number;
  staticItems: StaticItem[];
}

/** A finished call whose result was shown collapsed: all of it, for Ctrl+O (app/OutputViewer.tsx). */
export interface CollapsedOutput {
  title: string;
  kind: OutputKind;
  lines: string[];
}

/** Collapsed results kept for Ctrl+O: the latest ones (older output stays in the session's messages). */
const KEPT_OUTPUTS = 30;

export interface RunningTool {
  call: ToolCall;
  startedAt: number;
  /** The last lines a running command printed. */
  tail: string[];
}

export interface TranscriptOptions {
  paint: Paint;
  glyphs: Glyphs;
  width: () => number;
  frameMs: number;
  /** The clock the spinner's elapsed time is read from (tests give their own). */
  now?: () => number;
}

const TAIL_LINES = 4;

export class Transcript {
  /** Finished lines not yet handed to a frame. Nothing older is kept: the terminal's scrollback holds it. */
  private pending: StaticItem[] = [];
  private current: Frame = { version: 0, staticKey: 0, staticItems: [] };
  readonly tools = new Map<string, RunningTool>();
  /** Results shown collapsed, oldest first, for Ctrl+O. */
  readonly collapsed: CollapsedOutput[] = [];
  notice: string | null = null;
  thinking = false;
  turnStartedAt: number | null = null;
  /** Since when a question has waited for the user (the turn's clock stands still meanwhile), and the time it stood. */
  private waitingSince: number | null = null;
  private waitedMs = 0;
  /** Output tokens of this turn: counted by the provider when known, estimated from streamed text meanwhile. */
  outputTokens = 0;
  private streamedChars = 0;
  private countedTokens = 0;
  private nextId = 0;
  private markdown: MarkdownStream;
  private listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | null = null;
  private version = 0;

  constructor(private readonly opts: TranscriptOptions) {
    this.markdown = new MarkdownStream(opts.paint, opts.width, opts.glyphs);
  }

  /** The latest frame; a new object whenever something changed, so React re-renders. */
  get frame(): Frame {
    return this.current;
  }

  /** The answer's line being streamed, rendered, cut to the last `rows` rows of `columns`. */
  partial(rows: number, columns: number): string {
    return rows <= 0 ? '' : this.markdown.partialTail(rows * columns - 1);
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Appends finished lines (a block of several becomes one item, printed together). */
  print(...lines: string[]): void {
    if (lines.length === 0) return;
    this.pending.push({ id: this.nextId++, text: lines.join('\n') });
    this.changed();
  }

  /** The turn's elapsed time, less the time questions waited for the user. */
  elapsed(): number {
    if (this.turnStartedAt === null) return 0;
    return (this.waitingSince ?? this.now()) - this.turnStartedAt - this.waitedMs;
  }

  /** Whether a question waits for the user (the spinner's clock is paused). */
  get waiting(): boolean {
    return this.waitingSince !== null;
  }

  /** A question opened (true) or the last one was answered (false): pauses or resumes the turn's clock. */
  setWaiting(waiting: boolean): void {
    if (waiting === this.waiting) return;
    if (waiting) this.waitingSince = this.now();
    else {
      this.waitedMs += this.now() - (this.waitingSince ?? this.now());
      this.waitingSince = null;
    }
    this.changed(true);
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  startTurn(): void {
    this.turnStartedAt = this.now();
    this.waitedMs = 0;
    if (this.waitingSince !== null) this.waitingSince = this.turnStartedAt;
    this.outputTokens = 0;
    this.streamedChars = 0;
    this.countedTokens = 0;
    this.changed();
  }

  endTurn(): void {
    this.flushAnswer();
    this.turnStartedAt = null;
    this.thinking = false;
    this.notice = null;
    this.tools.clear();
    this.changed(true);
  }

  onEvent(raw: AgentEvent): void {
    const { paint, glyphs } = this.opts;
    // Everything an event carries is shown as text, never obeyed as terminal controls (safe-text.ts).
    const event = SHOWN_RAW.has(raw.type) ? raw : visibleInside(raw);
    switch (event.type) {
      case 'text_delta': {
        this.thinking = false;
        this.notice = null;
        this.streamedChars += event.text.length;
        this.outputTokens = this.countedTokens + Math.round(this.streamedChars / 4);
        const lines = this.markdown.push(event.text);
        if (lines.length > 0) this.print(...lines);
        else this.changed();
        return;
      }
      case 'thinking_delta':
        this.thinking = true;
        this.changed();
        return;
      case 'withdraw':
        this.markdown.discardPartial();
        this.print(paint.yellow(`(the answer above was cut off: ${event.reason})`));
        return;
      case 'assistant_message':
        this.flushAnswer();
        return;
      case 'usage':
        if (event.tier !== 'main') return;
        this.countedTokens += event.usage.output_tokens;
        this.streamedChars = 0;
        this.outputTokens = this.countedTokens;
        this.changed();
        return;
      case 'tool_start': {
        this.flushAnswer();
        this.tools.set(event.call.id, { call: event.call, startedAt: Date.now(), tail: [] });
        // A plan is printed in full before its approval is asked (exit_plan_mode asks once it runs).
        const plan = event.call.name === 'exit_plan_mode' ? (event.call.input as { plan?: unknown } | null)?.plan : undefined;
        if (typeof plan === 'string') this.printPlan(plan);
        this.changed(typeof plan === 'string');
        return;
      }
      case 'tool_output': {
        const tool = this.tools.get(event.id);
        if (!tool) return;
        const lines = [...tool.tail, ...event.chunk.replace(/\r/g, '').split('\n')].filter((l, i, all) => l !== '' || i < all.length - 1);
        tool.tail = lines.slice(-TAIL_LINES);
        this.changed();
        return;
      }
      case 'tool_end':
        this.tools.delete(event.call.id);
        // A search that ran was shown by its web_search event: one line with the query and the results.
        if (event.call.name === 'web_search' && !event.result.isError && Array.isArray(event.result.display?.results)) return;
        this.print(...toolBlock(event.call, event.result, glyphs, paint));
        this.keepCollapsed(event.call, event.result);
        return;
      case 'permission':
        if (event.decision.behavior === 'deny' && event.source !== 'user') {
          this.print(`${paint.red(glyphs.cross)} ${toolTitle(event.call, paint)} ${paint.red('denied')}: ${paint.dim(event.decision.reason)}`);
        } else if (event.source === 'user') {
          const allowed = event.decision.behavior === 'allow';
          const what = event.choice === 'allow_session' ? 'allowed for this session' : event.choice === 'deny_session' ? `denied ${paint.dim(`(deny rule ${event.call.name} added for this session; /permissions remove ${event.call.name} lifts it)`)}` : allowed ? 'allowed' : 'denied';
          this.print(`${allowed ? paint.green(glyphs.check) : paint.red(glyphs.cross)} ${toolTitle(event.call, paint)} ${what}`);
        }
        return;
      case 'retry':
        this.notice = retryNotice(event.attempt, event.maxRetries, event.delayMs, event.cause);
        this.print(paint.yellow(this.notice));
        return;
      case 'compact':
        // /compact says what it did itself: one line per event.
        if (event.trigger === 'manual') return;
        this.print(paint.dim(`${glyphs.dot} Context compacted (${event.trigger}): ${formatTokens(event.preTokens)} ${glyphs.arrow} ${formatTokens(event.postTokens)} tokens`));
        return;
      case 'refusal':
        this.print(paint.red(`The model refused: ${event.text}`));
        return;
      case 'log':
        if (event.level === 'error') this.print(paint.red(`Error: ${event.message}`));
        else if (event.level === 'warn') this.print(paint.yellow(`Warning: ${event.message}`));
        return;
      case 'result':
        this.flushAnswer();
        if (event.result.aborted) this.print(paint.yellow('Interrupted.'));
        else if (event.result.isError) this.print(paint.red(`Error: ${event.result.error ?? event.result.subtype}`));
        return;
      default: {
        const search = webSearchOf(event);
        if (search) {
          // Server-side searches are published with the finished response: its last line is printed first.
          this.flushAnswer();
          this.print(webSearchLine(search, glyphs, paint));
          return;
        }
        const mode = modeChangeLine(event, glyphs, paint);
        if (mode) this.print(mode);
        return;
      }
    }
  }

  /** A plan to approve, rendered as markdown into the scrollback (read in full, kept afterwards). */
  printPlan(plan: string): void {
    const { paint, glyphs } = this.opts;
    const markdown = new MarkdownStream(paint, () => Math.max(20, this.opts.width() - 2), glyphs);
    // A plan that opens with its own "# Plan…" heading has that heading as its title, so "Plan" is not shown twice.
    const { title, body } = planTitle(plan);
    const lines = [...markdown.push(body), ...markdown.end()];
    this.print(`${paint.magenta(glyphs.bullet)} ${paint.bold(title)}`, ...lines.map((line) => (line ? `  ${line}` : '')));
  }

  /**
   * A resumed conversation, printed once as it was: prompts, answers (rendered) and one line per tool call; only
   * its end when it is long, below a line saying how much is not shown. How a user message reads (a prompt, a
   * compaction's summary, a `!command`) and how much is drawn is the session store's `transcript` service.
   */
  printHistory(messages: MessageParam[], history: Services['transcript']): void {
    const tail = history.tail(messages, (message) => this.historyLines(message, history.userItems), this.opts.width());
    const note = history.hiddenNote(tail);
    if (note) this.print(this.opts.paint.dim(note));
    for (const lines of tail.groups) this.print(...lines);
  }

  /** What a resumed message looks like in the transcript (no lines: nothing shown, e.g. a tool result). */
  private historyLines(stored: MessageParam, userItems: Services['transcript']['userItems']): string[] {
    const message = visibleInside(stored);
    const { paint, glyphs } = this.opts;
    const blocks = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
    const lines: string[] = [];
    if (message.role === 'user') {
      for (const item of userItems(message)) {
        if (item.kind === 'prompt') lines.push(`${paint.bold.cyan('>')} ${shownPrompt(item.text).split('\n').join('\n  ')}`);
        else if (item.kind === 'shell') lines.push(paint.bold(`! ${item.text}`));
        else lines.push(`${paint.magenta(glyphs.bullet)} ${paint.bold('Summary of the earlier conversation')} ${paint.dim('(compacted)')}`, ...item.text.split('\n').map((l) => paint.dim(`  ${l}`)));
      }
    }
    for (const block of blocks) {
      if (block.type === 'text' && message.role === 'user') continue;
      else if (block.type === 'text') {
        const markdown = new MarkdownStream(paint, this.opts.width, glyphs, { rows: false });
        lines.push(...markdown.push(block.text), ...markdown.end());
      } else if (block.type === 'tool_use') lines.push(`${paint.dim(glyphs.bullet)} ${toolTitle({ id: block.id, name: block.name, input: block.input }, paint)}`);
      else if (block.type === 'server_tool_use' && block.name === 'web_search') {
        const found = blocks.find((b) => b.type === 'web_search_tool_result' && b.tool_use_id === block.id);
        const results = found && found.type === 'web_search_tool_result' && Array.isArray(found.content) ? found.content : [];
        const query = (block.input as { query?: unknown } | null)?.query;
        lines.push(webSearchLine({ query: typeof query === 'string' ? query : '', results, citations: [] }, glyphs, paint));
      }
    }
    return lines;
  }

  private keepCollapsed(call: ToolCall, result: ToolResult): void {
    const { kind, lines, shown } = resultLines(result);
    if (lines.length <= shown) return;
    this.collapsed.push({ title: toolTitle(call, this.opts.paint), kind, lines });
    if (this.collapsed.length > KEPT_OUTPUTS) this.collapsed.splice(0, this.collapsed.length - KEPT_OUTPUTS);
  }

  /** The todo list, printed whenever it changes. */
  printTodos(given: Array<{ content: string; status: string }>): void {
    const { paint, glyphs } = this.opts;
    const todos = visibleInside(given);
    if (todos.length === 0) return;
    const lines = todos.map((t) =>
      t.status === 'completed' ? paint.green(`  ${glyphs.check} ${paint.strikethrough(t.content)}`) : t.status === 'in_progress' ? paint.bold(`  ${glyphs.pointer} ${t.content}`) : `  ${glyphs.dot} ${t.content}`,
    );
    this.print(paint.bold('Todos'), ...lines);
  }

  /** The last lines a running tool printed, for the live region. */
  toolTail(tool: RunningTool, maxLines: number): string[] {
    return maxLines <= 0 ? [] : tool.tail.slice(-maxLines);
  }

  private flushAnswer(): void {
    const rest = this.markdown.end();
    if (rest.length > 0) this.print(...rest);
  }

  /** Tells listeners on the next frame; `now` for changes the user must see at once (turn end). */
  private changed(now = false): void {
    this.version++;
    if (now) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.emit();
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.emit();
    }, this.opts.frameMs);
  }

  private emit(): void {
    const staticItems = this.pending.length > 0 ? this.pending.splice(0) : this.current.staticItems;
    const staticKey = staticItems === this.current.staticItems ? this.current.staticKey : this.current.staticKey + 1;
    this.current = { version: this.version, staticKey, staticItems };
    for (const listener of [...this.listeners]) listener();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.listeners.clear();
  }
}
