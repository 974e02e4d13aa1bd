/** The one comment a triggered run posts and then keeps up to date: progress while it works, then the answer. */
import type { KeelOutcome } from './run-keel.js';

const MAX_COMMENT = 60_000; // GitHub refuses comments over 65,536 characters

export function progressBody(runUrl: string, steps: string[]): string {
  const recent = steps.slice(-15);
  const list = recent.length ? `\n\n${steps.length > recent.length ? `… ${steps.length - recent.length} earlier steps\n` : ''}${recent.map((s) => `- [x] \`${s.replace(/`/g, "'")}\``).join('\n')}` : '';
  return `**Keel is working on it…** [View the run](${runUrl})${list}`;
}

export function finalBody(runUrl: string, outcome: KeelOutcome, failed: boolean, reason: string): string {
  const r = outcome.result;
  const cost = r ? `$${r.total_cost_usd.toFixed(4)}` : 'unknown';
  const footer = `\n\n---\n<sub>Keel · ${r ? `${r.num_turns} turn${r.num_turns === 1 ? '' : 's'} · ` : ''}cost ${cost} · [run](${runUrl})${r ? ` · session \`${r.session_id}\`` : ''}</sub>`;
  let answer: string;
  if (failed) answer = `**Keel could not finish:** ${reason}${r?.result ? `\n\n${r.result}` : ''}`;
  else if (r?.structured_output !== undefined) answer = `\`\`\`json\n${JSON.stringify(r.structured_output, null, 2)}\n\`\`\``;
  else answer = r?.result?.trim() || '(Keel gave no answer text.)';
  if (answer.length > MAX_COMMENT) answer = `${answer.slice(0, MAX_COMMENT)}\n\n… (cut: the full answer is in the job summary)`;
  return answer + footer;
}
