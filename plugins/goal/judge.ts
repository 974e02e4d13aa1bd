/** Asks the small model whether the goal holds, from the transcript (and the check command's outcome). */
import { responseText, type MessageParam, type Turn } from '../../kernel/index.js';

export interface Verdict {
  met: boolean;
  reason: string;
}

const SYSTEM =
  'You judge whether a coding agent has reached a goal. You get the goal, the end of the transcript and, when there is one, the outcome of a check command. ' +
  'Answer with one line: "MET: <why>" when the transcript shows the goal holds, else "NOT MET: <what is missing>". Judge only from the evidence given.';

/** The last messages of the transcript as plain text, newest last, at most `limit` characters. */
export function transcriptText(messages: MessageParam[], limit = 12_000): string {
  const lines: string[] = [];
  for (const message of messages) {
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    for (const block of blocks as Array<Record<string, unknown>>) {
      if (block.type === 'text') lines.push(`${message.role}: ${String(block.text)}`);
      else if (block.type === 'tool_use') lines.push(`${message.role} called ${String(block.name)} ${JSON.stringify(block.input)}`);
      else if (block.type === 'tool_result') lines.push(`tool result: ${typeof block.content === 'string' ? block.content : JSON.stringify(block.content)}`);
    }
  }
  const text = lines.join('\n');
  return text.length > limit ? `…${text.slice(text.length - limit)}` : text;
}

export function parseVerdict(text: string): Verdict {
  const line = text.trim().split('\n')[0] ?? '';
  const match = /^\s*(NOT\s+MET|MET)\b\s*:?\s*(.*)$/i.exec(line);
  if (!match) return { met: false, reason: `the judge's answer was not MET or NOT MET: ${line.slice(0, 200)}` };
  return { met: !/^NOT/i.test(match[1]!), reason: match[2]!.trim() };
}

export async function judge(turn: Turn, condition: string, check: string | undefined): Promise<Verdict> {
  const evidence = [`Goal: ${condition}`, '', 'Transcript (end):', transcriptText(turn.session.messages)];
  if (check) evidence.push('', `Check command: ${check}`);
  const response = await turn.kernel.services.require('query', 'goal').ask({ tier: 'small', system: [{ type: 'text', text: SYSTEM }], messages: [{ role: 'user', content: evidence.join('\n') }], maxTokens: 512 }, turn);
  return parseVerdict(responseText(response.content));
}
