/**
 * Waiting for something asynchronous in a test: poll until it holds, never sleep a fixed time. CI runs on a
 * loaded 2-core machine where a frame, a file or a process output can come seconds late, so the deadline is
 * generous and only bounds a hang; on timeout the error names what was awaited.
 */

/** Resolves the first truthy value `check` returns (it may be async), polling every `everyMs`; throws after `timeoutMs`. */
export async function until<T>(check: () => T | Promise<T>, what: string, opts: { timeoutMs?: number; everyMs?: number } = {}): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const { timeoutMs = 30_000, everyMs = 25 } = opts;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
