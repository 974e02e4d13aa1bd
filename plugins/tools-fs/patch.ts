/** A unified diff of one file with 3 lines of context, without the `Index:` banner. */
export async function unifiedDiff(name: string, before: string, after: string): Promise<string> {
  // Loaded on first edit, not at start-up.
  const { createPatch } = await import('diff');
  const lf = (s: string) => s.replace(/\r\n/g, '\n');
  const patch = createPatch(name, lf(before), lf(after), undefined, undefined, { context: 3 });
  return patch.replace(/^Index: .*\n=+\n/, '').trimEnd();
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
