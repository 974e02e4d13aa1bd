/** An error the CLI reports as one line on stderr, exiting with `exitCode`. */
export class KeelError extends Error {
  readonly code: string;
  readonly exitCode: number;
  constructor(message: string, opts: { code?: string; exitCode?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'KeelError';
    this.code = opts.code ?? 'keel_error';
    this.exitCode = opts.exitCode ?? 1;
  }
}

/** Thrown by providers when the prompt does not fit the window: the loop compacts and retries. */
export class ContextOverflowError extends KeelError {
  constructor(message = 'prompt is too long for the model context window') {
    super(message, { code: 'context_overflow' });
    this.name = 'ContextOverflowError';
  }
}

/** Checked structurally so errors thrown by a separately bundled plugin are still recognised. */
export function isContextOverflow(err: unknown): boolean {
  return inCauseChain(err, (e) => e.code === 'context_overflow');
}

export function isAbortError(err: unknown): boolean {
  return inCauseChain(err, (e) => e.name === 'AbortError' || e.code === 'ABORT_ERR' || e.name === 'APIUserAbortError');
}

/** The error and its causes, outermost first: hook errors arrive wrapped (PluginError), so callers look through `cause`. */
function* causes(err: unknown): Generator<{ name?: unknown; code?: unknown; exitCode?: unknown; message?: unknown }> {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) yield e;
}

export function inCauseChain(err: unknown, test: (e: { name?: unknown; code?: unknown }) => boolean): boolean {
  for (const e of causes(err)) if (test(e)) return true;
  return false;
}

/** The error in the cause chain that was written for users: a KeelError (checked structurally), if any. */
function forUsers(err: unknown): { message: string; exitCode: number } | undefined {
  for (const e of causes(err)) if (typeof e.exitCode === 'number' && typeof e.message === 'string') return { message: e.message, exitCode: e.exitCode };
  return undefined;
}

/**
 * The message to show a person: a KeelError anywhere in the cause chain was written for users, so it wins
 * over the plugin/hook wrapping around it.
 */
export function userMessage(err: unknown): string {
  return forUsers(err)?.message ?? errorMessage(err);
}

/** The exit code of the error written for users (see `userMessage`), else 1. */
export function userExitCode(err: unknown): number {
  return forUsers(err)?.exitCode ?? 1;
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
