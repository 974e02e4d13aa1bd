/** See build-snapshot.mjs. */
export declare function buildSnapshot(options: { root: string; live: string; version: string | undefined }): void;
export declare function dropHeldBuiltinsCodeCache(file: string, builtinsFile: string, version: string | undefined): void;
