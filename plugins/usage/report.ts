/** The text of `/cost`. */
import type { UsageBook } from './totals.js';

const n = (value: number) => value.toLocaleString('en-US');

export function formatUsd(value: number): string {
  return value < 0.5 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

export function costReport(book: UsageBook, context: { tokens: number; window: number }): string {
  const { usage } = book.total;
  const lines = [
    `Total cost:    ${formatUsd(book.total.costUsd)}`,
    `Total usage:   ${n(usage.input_tokens)} input, ${n(usage.output_tokens)} output, ${n(usage.cache_read_input_tokens)} cache read, ${n(usage.cache_creation_input_tokens)} cache write (${book.total.calls} ${book.total.calls === 1 ? 'call' : 'calls'})`,
  ];
  const inherited = book.inherited;
  if (inherited) {
    const calls = inherited.calls === undefined ? '' : ` over ${inherited.calls} ${inherited.calls === 1 ? 'call' : 'calls'}`;
    lines.push(
      inherited.forked
        ? `Inherited:     ${formatUsd(inherited.costUsd)}${calls} from session ${inherited.from} (forked from it; included above)`
        : `Earlier runs:  ${formatUsd(inherited.costUsd)}${calls} before this session was resumed (included above)`,
    );
  }
  const models = Object.entries(book.byModel);
  if (models.length > 0) {
    lines.push(inherited ? 'By model (this run):' : 'By model:');
    for (const [model, totals] of models) {
      const u = totals.usage;
      lines.push(
        `  ${model} (${totals.tiers.join(', ')}): ${n(u.input_tokens)} input, ${n(u.output_tokens)} output, ${n(u.cache_read_input_tokens)} cache read, ${n(u.cache_creation_input_tokens)} cache write, ${formatUsd(totals.costUsd)}${totals.priced ? '' : ' (no price known: add it under `pricing` in agent.config.ts)'}`,
      );
    }
  }
  if (book.byTier.small.calls > 0) {
    lines.push(`Auxiliary (small model) calls: ${book.byTier.small.calls}, ${formatUsd(book.byTier.small.costUsd)}`);
  }
  if (context.window > 0) {
    const pct = Math.round((context.tokens / context.window) * 100);
    lines.push(`Context:       ${n(context.tokens)} / ${n(context.window)} tokens (${pct}%)`);
  }
  return lines.join('\n');
}
