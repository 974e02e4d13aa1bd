/**
 * `import()` of a module that is not part of Keel's bundle: a plugin or preset package, jiti, the Ink UI's own
 * bundle. One function so the binary can bind it: its CommonJS build may run from a V8 start-up snapshot, where
 * code compiled at build time has no module loader for `import()`, so the binary passes in the host's.
 */
export function nativeImport(specifier: string): Promise<Record<string, unknown>> {
  return import(specifier) as Promise<Record<string, unknown>>;
}
