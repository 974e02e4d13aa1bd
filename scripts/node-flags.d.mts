/** See node-flags.mjs. */
export declare const KEEL_NODE_FLAGS: readonly string[];
export declare const KEEL_SNAPSHOT_FLAGS: readonly string[];
