/** See snapshot-code-cache.mjs. */
export interface BuiltinCodeCacheEntry {
  id: string;
  start: number;
  end: number;
  bytes: number;
}
export declare function readBuiltinCodeCache(blob: Buffer): { start: number; entries: BuiltinCodeCacheEntry[] };
export declare function withBuiltinCodeCache(
  blob: Buffer,
  keep: (id: string) => boolean,
): { blob: Buffer; kept: BuiltinCodeCacheEntry[]; entries: BuiltinCodeCacheEntry[] };
