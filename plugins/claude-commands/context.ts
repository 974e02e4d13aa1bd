/**
 * `/context`: what fills the context window. The next request is assembled as the loop would (each
 * `contextLoad` tap in turn, so every system block is credited to the plugin that added it, then
 * `selectTools`) without calling the model, and each part is counted.
 */
import { auxiliaryTurn, defaultTools, toApiTool, type Context, type Kernel, type Session, type TextBlockParam, type Turn } from '../../kernel/index.js';

export interface ContextPart {
  label: string;
  tokens: number;
}

export interface ContextReport {
  parts: ContextPart[];
  window: number;
  /** Tokens the last request really used, as the provider reported (0 before the first). */
  measured: number;
}

/** About four characters a token for English text and code: an estimate, said as one. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

const SYSTEM_LABELS: Record<string, string> = {
  'system-prompt': 'System prompt',
  instructions: 'Memory files',
  'memory-index': 'Memory files',
  skills: 'Skills',
  'output-styles': 'System prompt',
  'plan-mode': 'System prompt',
  // The names of the deferred tools, listed so the model can load them.
  'tool-search': 'Tools',
};

interface TapLike {
  name: string;
  fn: (context: Context, turn: Turn) => Promise<Context | undefined> | Context | undefined;
}

export async function measureContext(kernel: Kernel, session: Session): Promise<ContextReport> {
  const measured = kernel.state.get().contextTokens;
  const turn = auxiliaryTurn(kernel, session);
  let context: Context = {
    system: [],
    messages: session.messages.slice(),
    budget: { window: kernel.state.get().contextWindow, used: measured, maxOutput: kernel.config.maxTokens },
  };
  const owners = new Map<TextBlockParam, string>();
  for (const tap of (kernel.hooks.contextLoad as unknown as { taps: TapLike[] }).taps) {
    const before = new Set(context.system);
    context = (await tap.fn(context, turn)) ?? context;
    for (const block of context.system) if (!before.has(block) && !owners.has(block)) owners.set(block, tap.name);
  }
  const totals = new Map<string, number>();
  const add = (label: string, tokens: number) => totals.set(label, (totals.get(label) ?? 0) + tokens);
  for (const label of ['System prompt', 'Tools', 'MCP tools', 'Memory files', 'Skills', 'Messages']) totals.set(label, 0);
  for (const block of context.system) {
    const owner = owners.get(block) ?? 'system-prompt';
    add(SYSTEM_LABELS[owner] ?? `Other (${owner})`, estimateTokens(block.text));
  }
  const tools = await kernel.hooks.selectTools.promise(context.tools ?? defaultTools(kernel, turn), turn);
  for (const tool of tools) {
    const tokens = estimateTokens(JSON.stringify(toApiTool(tool)));
    add(tool.name === 'skill' ? 'Skills' : tool.name.startsWith('mcp__') ? 'MCP tools' : 'Tools', tokens);
  }
  add('Messages', estimateTokens(JSON.stringify(context.messages)));
  return { parts: [...totals].map(([label, tokens]) => ({ label, tokens })), window: context.budget.window || kernel.state.get().contextWindow, measured };
}

const COLOURS = [36, 33, 35, 32, 34, 31, 96, 93];
const GLYPHS = ['█', '▓', '▒', '▚', '▞', '▙', '▛', '▜'];

function short(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 100_000 ? 0 : 1).replace(/\.0$/, '')}k` : String(n);
}

/** The report as text: a bar of `width` cells, one glyph (and, with `colour`, one colour) per part, then the numbers. */
export function formatContext(report: ContextReport, opts: { colour: boolean; width?: number }): string {
  const width = opts.width ?? 50;
  const used = report.parts.reduce((sum, p) => sum + p.tokens, 0);
  const window = Math.max(report.window, used);
  const paint = (i: number, text: string) => (opts.colour ? `\x1b[${COLOURS[i % COLOURS.length]}m${text}\x1b[39m` : text);
  let bar = '';
  let cells = 0;
  report.parts.forEach((part, i) => {
    const n = part.tokens > 0 ? Math.max(1, Math.round((part.tokens / window) * width)) : 0;
    const take = Math.min(n, width - cells);
    bar += paint(i, GLYPHS[i % GLYPHS.length]!.repeat(take));
    cells += take;
  });
  bar += (opts.colour ? '\x1b[2m' : '') + '·'.repeat(width - cells) + (opts.colour ? '\x1b[22m' : '');
  const pct = (n: number) => (window > 0 ? `${((100 * n) / window).toFixed(1)}%` : '');
  const labelWidth = Math.max(...report.parts.map((p) => p.label.length), 'Free space'.length) + 2;
  const lines = [
    `Context: about ${short(used)} of ${short(window)} tokens (${pct(used)})`,
    `[${bar}]`,
    ...report.parts.map((p, i) => `  ${paint(i, GLYPHS[i % GLYPHS.length]!)} ${p.label.padEnd(labelWidth)}${String(p.tokens).padStart(8)} tokens  ${pct(p.tokens).padStart(6)}`),
    `  · ${'Free space'.padEnd(labelWidth)}${String(Math.max(0, window - used)).padStart(8)} tokens  ${pct(Math.max(0, window - used)).padStart(6)}`,
    `Counted at about 4 characters a token${report.measured > 0 ? `; the last request measured ${report.measured} tokens` : ''}.`,
  ];
  return lines.join('\n');
}
