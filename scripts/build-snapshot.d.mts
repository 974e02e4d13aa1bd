/** See build-snapshot.mjs. */
export declare function builtinImports(metafile: { outputs: Record<string, { imports: Array<{ path: string; external?: boolean }> }> }): Set<string>;
export declare function buildSnapshot(options: { root: string; live: string; version: string | undefined; runtimeBuiltins?: Set<string> }): void;
export declare function dropUnneededCodeCache(file: string, builtinsFile: string, needed: Set<string> | undefined, version: string | undefined): void;
