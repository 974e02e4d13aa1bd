/**
 * What the binary's CommonJS build (dist/bin/keel.cjs) needs from whoever started it, and what it offers the Ink
 * UI's separate ES module bundle. One object on a global symbol, because that bundle is built apart and the code of
 * keel.cjs may come from a V8 start-up snapshot made at build time.
 */
export interface Host {
  /** The host's `import()`: module loading for code that may have been compiled into a snapshot. */
  import(specifier: string): Promise<Record<string, unknown>>;
  /** Keel's kernel module as keel.cjs holds it, so the UI bundle uses the same instances, not a copy. */
  kernel: Record<string, unknown>;
}

const KEY = Symbol.for('keel.binary.host');

type WithHost = typeof globalThis & { [KEY]?: Partial<Host> };

export function setHost(part: Partial<Host>): void {
  const g = globalThis as WithHost;
  g[KEY] = { ...g[KEY], ...part };
}

export function hostImport(specifier: string): Promise<Record<string, unknown>> {
  const importer = (globalThis as WithHost)[KEY]?.import;
  if (!importer) return Promise.reject(new Error(`keel: cannot import ${specifier}: the binary was started without a module loader`));
  return importer(specifier);
}
