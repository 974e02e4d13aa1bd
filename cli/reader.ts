/**
 * The reader of stdout going away (`keel -p … | head`, an SDK host whose reader died): the next write fails with
 * EPIPE. Handled like a closed input rather than crashing on an unhandled stream error: the run's signal aborts
 * (the model stream stops, tools are killed with their process group), nothing more is written, and the mode
 * exits with READER_GONE_EXIT after one line on stderr. The CLI owns the process's stdout, so it watches it for the
 * headless, pipe, SDK and sub-agent frontends: they get the watch's signal as theirs and a stdout that drops writes
 * once the reader is gone.
 */

/** 128 + SIGPIPE, what a shell reports for a program a closed pipe stopped. */
export const READER_GONE_EXIT = 141;

export interface ReaderWatch {
  /** Aborted when a write to stdout fails, or when the run's own signal aborts. */
  readonly signal: AbortSignal;
  /** Stops following the run's signal, and stops listening when nothing written is still pending. */
  dispose(): void;
  /** The failure's code or message once the reader went away. */
  readonly gone: string | undefined;
  /** Resolves once everything written so far has been handed to the reader (or the reader went away). */
  flushed(): Promise<void>;
  /** The one line for stderr. */
  line(): string;
  /** `stdout` for a frontend: the same stream, except that writes after the reader went away are dropped. */
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

export function watchReader(stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream, run: AbortSignal): ReaderWatch {
  const controller = new AbortController();
  // Not AbortSignal.any: its signals are weakly held, which the start-up snapshot's warm-up run cannot keep.
  const follow = () => controller.abort(run.reason);
  if (run.aborted) follow();
  else run.addEventListener('abort', follow, { once: true });
  let gone: string | undefined;
  const onError = (err: NodeJS.ErrnoException) => {
    if (gone) return;
    gone = err.code ?? err.message;
    controller.abort(Object.assign(new Error(`the reader of stdout went away (${gone})`), { name: 'AbortError' }));
  };
  stdout.on('error', onError);
  // stderr may have gone with it (`2>&1 | head`): its errors must not crash the process either.
  const ignore = () => undefined;
  stderr.on('error', ignore);
  const guarded = new Proxy(stdout, {
    get(target, key) {
      if (key === 'write') return (...args: Parameters<NodeJS.WritableStream['write']>) => (gone ? true : target.write(...args));
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    stdout: guarded,
    signal: controller.signal,
    dispose: () => {
      run.removeEventListener('abort', follow);
      // A write still in flight may fail after the run: then the listeners stay for the rest of the process.
      const pending = (stdout as { writableLength?: number }).writableLength ?? 0;
      if (gone || pending > 0) return;
      stdout.removeListener('error', onError);
      stderr.removeListener('error', ignore);
    },
    get gone() {
      return gone;
    },
    flushed: () =>
      new Promise<void>((resolve) => {
        // Only a real stream calls back (an embedder's stand-in sink may not).
        if (gone || !('writableLength' in stdout)) return resolve();
        stdout.write('', (err) => {
          if (err) onError(err);
          resolve();
        });
      }),
    line: () => `keel: the reader of stdout went away (${gone}): the run was stopped and its tools ended\n`,
  };
}
