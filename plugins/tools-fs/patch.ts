/** A unified diff of one file with 3 lines of context, without the `Index:` banner. */
export async function unifiedDiff(name: string, before: string, after: string): Promise<string> {
  // Loaded on first edit, not at start-up.
  const { createPatch } = await import('diff');
  const lf = (s: string) => s.replace(/\r\n/g, '\n');
  const patch = createPatch(name, lf(before), lf(after), undefined, undefined, { context: 3 });
  return patch.replace(/^Index: .*\n=+\n/, '').trimEnd();
}

