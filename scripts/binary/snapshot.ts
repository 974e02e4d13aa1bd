/** What the binary's start-up snapshot holds beyond Keel's statically imported modules, and its module loader. */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Evaluates, while the snapshot is built, the libraries a common run imports on first use: the Anthropic SDK
 * (every model request) and `diff` (edit previews and patches). Not the shell parser: its 1.3 MB bundle made every
 * start-up about 10 ms slower to restore than loading it from its code cache when a run first checks a command.
 */
export function preloadForSnapshot(): void {
  void Promise.all([import('../../plugins/query-anthropic/client.js'), import('diff')]);
}

/**
 * `import()` for code restored from a snapshot, which has no loader of its own: a function compiled at run time
 * with Node's main-context loader (`vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER`, Node ≥ 20.12). Bare names
 * resolve from `file`'s folder. Node flags that loader experimental and warns once, at the first import; that
 * warning is about Keel's plumbing, not anything the user did, so it is not printed.
 */
export function mainContextImporter(file: string): (specifier: string) => Promise<Record<string, unknown>> {
  // Compiled on first use: most runs import nothing from outside the bundle, and node:vm costs a few ms to load.
  let raw: ((specifier: string) => Promise<Record<string, unknown>>) | undefined;
  return (specifier) => {
    raw ??= new vm.Script('(specifier) => import(specifier)', {
      filename: file,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    }).runInThisContext() as (specifier: string) => Promise<Record<string, unknown>>;
    const emit = process.emitWarning;
    process.emitWarning = () => undefined;
    try {
      return raw(specifier);
    } finally {
      process.emitWarning = emit;
    }
  };
}

/**
 * `crypto.randomUUID()` draws from a buffer of random bytes that Node fills 128 UUIDs at a time. A snapshot holds
 * that buffer as the build left it (the warm-up made session ids), so every restored process would hand out the
 * same ids. Node refills the buffer on the draw that finds its position back at 0, so one batch of draws, wherever
 * the build left the position, includes a refill from the system's entropy, after which every id is fresh. (Math
 * random is reseeded by V8 on restore; `randomBytes` keeps no buffer.)
 */
export function refreshRandomUUID(): void {
  for (let i = 0; i < UUID_BATCH; i++) randomUUID();
}
/** Node's batch (lib/internal/crypto/random.js, kBatchSize). */
const UUID_BATCH = 128;

/**
 * Node's timers remember the earliest expiry they asked libuv for (lib/internal/timers.js, `nextExpiry`), and only a
 * timer list due before it arms libuv's timer again; clearing timers leaves it as it was. A snapshot holds the value
 * the warm-up left (about 30 s on the build's clock), but a restored process has no libuv timer armed: every timer
 * list due later than that was never scheduled, so a ref'd 60 s interval (the MCP bridge's hold-open while it waits on
 * servers) kept nothing alive, and `keel mcp list` on a busy machine exited 0 having printed nothing. One unref'd
 * timeout, due long before that stale expiry, arms libuv's timer; when it runs, Node sets `nextExpiry` right.
 */
export function rearmTimers(): void {
  setTimeout(() => undefined, 0).unref();
}

/**
 * Writes the built-ins this snapshot holds evaluated (`process.moduleLoadList` as it is serialised) to
 * `$KEEL_SNAPSHOT_BUILTINS`, for the build to drop their code cache from the blob (scripts/snapshot-code-cache.mjs):
 * a restored process never compiles them again.
 */
export function recordSnapshotBuiltins(): void {
  const out = process.env.KEEL_SNAPSHOT_BUILTINS;
  if (!out) return;
  v8.startupSnapshot.addSerializeCallback(() => {
    const loaded = (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
    const builtins = loaded.filter((entry) => entry.startsWith('NativeModule ')).map((entry) => entry.slice('NativeModule '.length));
    writeFileSync(out, `${JSON.stringify(builtins)}\n`);
  });
}
