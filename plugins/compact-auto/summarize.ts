import { auxiliaryTurn, responseText, type Kernel, type MessageParam, type Session } from '../../kernel/index.js';
import { renderTranscript } from './transcript.js';

/** The sections every compaction summary must have, in this order. */
export const SECTIONS = ['Completed tasks', 'Key findings', 'Current state', 'Pending work', 'Important decisions'] as const;

const SYSTEM = `You write the working memory of a coding agent whose conversation is being compacted to fit its context window.
The agent will continue from your summary alone, so it must hold everything needed to carry on without asking again.
Write Markdown with exactly these five sections, as level-2 headings, in this order:
${SECTIONS.map((s) => `## ${s}`).join('\n')}
Be specific: file paths, function and symbol names, commands run and their outcome, error messages, values, and the user's requests and constraints (verbatim where they matter).
Write nothing before the first heading.`;

export interface SummarizeOptions {
  /** Extra instructions from the user (`/compact …`). */
  instructions?: string;
  signal?: AbortSignal;
  /** Longest acceptable summary, in tokens; longer counts as a failure. */
  maxTokens: number;
  /** How much transcript the small model is sent, in characters. */
  transcriptChars: number;
}

export class SummaryError extends Error {
  override name = 'SummaryError';
}

/** Asks the small model for a five-section summary of `messages` and checks it. Throws SummaryError. */
export async function summarize(kernel: Kernel, session: Session, messages: readonly MessageParam[], opts: SummarizeOptions): Promise<string> {
  const transcript = renderTranscript(messages, { maxResultChars: 2000, maxChars: opts.transcriptChars });
  const extra = opts.instructions?.trim() ? `\n\nAdditional instructions for this summary: ${opts.instructions.trim()}` : '';
  let text: string;
  let stop: string | null;
  let outputTokens: number;
  try {
    const response = await kernel.services.require('query', 'compact-auto').ask(
      {
        tier: 'small',
        system: [{ type: 'text', text: SYSTEM }],
        maxTokens: opts.maxTokens,
        signal: opts.signal,
        messages: [{ role: 'user', content: `<conversation>\n${transcript}\n</conversation>${extra}\n\nWrite the summary now.` }],
      },
      auxiliaryTurn(kernel, session, opts.signal),
    );
    text = responseText(response.content).trim();
    stop = response.stopReason;
    outputTokens = response.usage.output_tokens;
  } catch (err) {
    throw new SummaryError(`the summary request failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  checkSummary(text, stop, Math.max(outputTokens, Math.ceil(text.length / 4)), opts.maxTokens);
  return text;
}

function checkSummary(text: string, stop: string | null, tokens: number, max: number): void {
  if (!text) throw new SummaryError('the summary came back empty');
  if (stop === 'max_tokens' || tokens > max) throw new SummaryError(`the summary is too long (${tokens} tokens, the limit is ${max})`);
  const missing = SECTIONS.filter((section) => !new RegExp(`^#{1,6}\\s*${section}\\b`, 'im').test(text));
  if (missing.length) throw new SummaryError(`the summary lacks the section${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
}
