/**
 * The most lines a diff may add and remove before Keel stops looking for the smallest one. jsdiff's search grows
 * with the file's length times the edit distance, so rewriting a 10 000-line file outright would hold the event
 * loop for most of a minute; past this bound the diff replaces the whole file in one hunk instead.
 */
const MAX_EDIT_LENGTH = 1000;

/** A unified diff of one file with 3 lines of context, without the `Index:` banner. */
export async function unifiedDiff(name: string, before: string, after: string): Promise<string> {
  // Loaded on first edit, not at start-up.
  const { createPatch } = await import('diff');
  const lf = (s: string) => s.replace(/\r\n/g, '\n');
  const patch = createPatch(name, lf(before), lf(after), undefined, undefined, { context: 3, maxEditLength: MAX_EDIT_LENGTH });
  if (patch === undefined) return wholeFileDiff(name, lf(before), lf(after));
  return patch.replace(/^Index: .*\n=+\n/, '').trimEnd();
}

/** One hunk removing every old line and adding every new one: what a diff too large to minimise shows. */
function wholeFileDiff(name: string, before: string, after: string): string {
  const lines = (s: string) => (s === '' ? [] : s.replace(/\n$/, '').split('\n'));
  const old = lines(before);
  const now = lines(after);
  const range = (n: number) => `${n === 0 ? 0 : 1},${n}`;
  const out = [`--- ${name}`, `+++ ${name}`, `@@ -${range(old.length)} +${range(now.length)} @@`];
  for (const line of old) out.push(`-${line}`);
  if (before !== '' && !before.endsWith('\n')) out.push('\\ No newline at end of file');
  for (const line of now) out.push(`+${line}`);
  if (after !== '' && !after.endsWith('\n')) out.push('\\ No newline at end of file');
  return out.join('\n');
}

/** What a file tool's display says it changed (status lines and telemetry read it): lines added and removed. */
export interface LineCounts {
  linesAdded: number;
  linesRemoved: number;
}

/** The lines a one-file unified diff adds and removes: those of its hunks, not its `---`/`+++` file headers. */
export function lineCounts(diff: string): LineCounts {
  let linesAdded = 0;
  let linesRemoved = 0;
  let inHunks = false;
  for (const line of diff.split('\n')) {
    if (line.startsWith('@@')) inHunks = true;
    else if (inHunks && line.startsWith('+')) linesAdded++;
    else if (inHunks && line.startsWith('-')) linesRemoved++;
  }
  return { linesAdded, linesRemoved };
}
