// The V8 code cache of Node's built-in modules that a start-up snapshot blob carries.
//
// `node --build-snapshot` ends the blob with code cache for every built-in Node has (about 320 of them, 3 MB in
// Node 20), and a restored process reads and copies all of it before it runs a line. A built-in the snapshot already
// evaluated is never compiled again in that process, so its cache is dead weight: the build drops those entries and
// keeps the ones a run may still compile (node:http on the first request, tty, …).
//
// Layout (Node's src/node_snapshotable.cc, SnapshotData::ToBlob): a uint32 magic, the metadata (a uint8 type,
// three strings, two uint32s), the V8 startup data (an int32 size and its bytes), Node's isolate and environment
// data, and last the code cache: a uint64 count of entries, each a string id and a byte vector (a uint64 length
// and its bytes), little-endian. The environment data has no length of its own, so the code cache is found as the
// first offset after the V8 data from which entries parse to exactly the end of the blob.

const MAGIC = 0x143da19;
const ID = /^[a-z_][a-z0-9_/.-]*$/i;

/** The blob's built-in code cache: where its section starts and each entry's id and byte range. Throws if the
 * blob is not laid out as above. */
export function readBuiltinCodeCache(blob) {
  let at = 0;
  const need = (n, what) => {
    if (at + n > blob.length) throw new Error(`snapshot blob ends inside its ${what} (offset ${at})`);
  };
  const u32 = (what) => (need(4, what), (at += 4), blob.readUInt32LE(at - 4));
  const u64 = (what) => (need(8, what), (at += 8), Number(blob.readBigUInt64LE(at - 8)));
  const skipString = (what) => {
    const length = u64(what);
    need(length, what);
    at += length;
  };
  if (u32('magic') !== MAGIC) throw new Error('not a Node start-up snapshot blob (its magic number differs)');
  need(1, 'metadata');
  at += 1;
  for (const what of ['Node version', 'architecture', 'platform']) skipString(what);
  u32('V8 cache tag');
  u32('flags');
  need(4, 'V8 startup data');
  const v8Size = blob.readInt32LE(at);
  at += 4;
  need(v8Size, 'V8 startup data');
  at += v8Size;
  for (let start = at; start + 8 <= blob.length; start++) {
    const entries = entriesFrom(blob, start);
    if (entries) return { start, entries };
  }
  throw new Error('snapshot blob has no built-in code cache section at its end');
}

/** The blob with only the built-in code cache entries `keep(id)` accepts; everything before them unchanged. */
export function withBuiltinCodeCache(blob, keep) {
  const { start, entries } = readBuiltinCodeCache(blob);
  const kept = entries.filter((entry) => keep(entry.id));
  const count = Buffer.alloc(8);
  count.writeBigUInt64LE(BigInt(kept.length));
  return { blob: Buffer.concat([blob.subarray(0, start), count, ...kept.map((entry) => blob.subarray(entry.start, entry.end))]), kept, entries };
}

function entriesFrom(blob, start) {
  let at = start;
  const u64 = () => {
    if (at + 8 > blob.length) return -1;
    at += 8;
    return Number(blob.readBigUInt64LE(at - 8));
  };
  const count = u64();
  if (count < 1 || count > 10_000) return undefined;
  const entries = [];
  const ids = new Set();
  for (let i = 0; i < count; i++) {
    const entryStart = at;
    const idLength = u64();
    if (idLength < 1 || idLength > 256 || at + idLength > blob.length) return undefined;
    const id = blob.toString('latin1', at, at + idLength);
    if (!ID.test(id) || ids.has(id)) return undefined;
    at += idLength;
    const dataLength = u64();
    if (dataLength < 0 || at + dataLength > blob.length) return undefined;
    at += dataLength;
    ids.add(id);
    entries.push({ id, start: entryStart, end: at, bytes: dataLength });
  }
  return at === blob.length ? entries : undefined;
}
