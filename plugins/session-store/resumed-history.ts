/**
 * How much of a resumed conversation a UI prints into the scrollback (part of the `transcript` service, so the Ink
 * and plain UIs print the same end). In the Ink UI drawing goes through <Static>, whose cost and memory grow with the
 * rows drawn (a 10 000-message session took 18–35 s and 670 MiB before the prompt answered; bench/ui-resume.mjs);
 * the plain UI would print tens of thousands of lines. So only the conversation's end is printed, up to a budget of
 * terminal rows, and one line says how many earlier messages are not shown. The model still gets the whole
 * conversation; only the printing is cut.
 */

/**
 * Terminal rows of a resumed conversation drawn at most: a few screens, enough to see where it was (Ink draws about
 * 1–3 ms a row on this project's 2-core machine).
 */
export const RESUMED_HISTORY_ROWS = 300;

export interface HistoryTail {
  /** Line groups to print, oldest first (one group per message; the oldest may be cut to its last rows). */
  groups: string[][];
  /** Messages before the drawn ones, not drawn at all. */
  hiddenMessages: number;
  /** Whether the oldest drawn message lost its first lines to the budget. */
  cut: boolean;
}

/** Rows a printed line (which may hold line breaks) takes at `width` columns; escape sequences count as text. */
function rows(line: string, width: number): number {
  let total = 0;
  for (const part of line.split('\n')) total += Math.max(1, Math.ceil(part.length / Math.max(1, width)));
  return total;
}

/**
 * The end of `messages` that fits `budget` rows, rendering only what is drawn (`linesOf` is called from the last
 * message backwards, and never for a message before the budget ran out).
 */
export function historyTail<M>(messages: readonly M[], linesOf: (message: M) => string[], width: number, budget = RESUMED_HISTORY_ROWS): HistoryTail {
  const groups: string[][] = [];
  let used = 0;
  let i = messages.length - 1;
  let cut = false;
  for (; i >= 0 && used < budget; i--) {
    const lines = linesOf(messages[i]!);
    if (lines.length === 0) continue;
    const size = lines.reduce((sum, line) => sum + rows(line, width), 0);
    if (used + size <= budget) {
      groups.push(lines);
      used += size;
      continue;
    }
    // The message that crosses the budget: its last lines that fit.
    const kept: string[] = [];
    for (let j = lines.length - 1; j >= 0 && used + rows(lines[j]!, width) <= budget; j--) {
      kept.unshift(lines[j]!);
      used += rows(lines[j]!, width);
    }
    if (kept.length > 0) {
      groups.push(kept);
      cut = true;
      i--;
    }
    break;
  }
  // Messages left before the loop stopped (ones without drawn lines included: they are not shown either).
  return { groups: groups.reverse(), hiddenMessages: i + 1, cut };
}

/** The one line above a cut history. */
export function hiddenNote(tail: HistoryTail): string | null {
  if (tail.hiddenMessages === 0 && !tail.cut) return null;
  const earlier = tail.hiddenMessages === 1 ? '1 earlier message' : `${tail.hiddenMessages.toLocaleString('en-US')} earlier messages`;
  const what = tail.hiddenMessages > 0 ? `${earlier}${tail.cut ? ' and the start of the next' : ''}` : 'the start of the first message shown';
  return `… ${what} not shown here (the model still has the whole conversation)`;
}
