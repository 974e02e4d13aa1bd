/** See node-flags.mjs. */
export declare const KEEL_NODE_FLAGS: readonly string[];
