/**
 * The V8 flags Keel's Node runs with, given by bin/keel.js on its `node` command lines (tests/e2e/snapshot.test.ts
 * checks the two agree) and used by the build for everything V8 checks flags against: the start-up snapshot and
 * the code caches are refused under other flags.
 *
 * `--max-semi-space-size=8`: V8's young generation otherwise doubles to 16 MiB semi-spaces partway through a long
 * session (about turn 450 of the loop bench), adding 16–32 MiB of resident memory that is never given back, for no
 * measurable CPU gain at Keel's allocation rate (bench/RESULTS.md).
 */
export const KEEL_NODE_FLAGS = ['--max-semi-space-size=8'];

/**
 * The flags added on the path that starts from Keel's start-up snapshot only (after KEEL_NODE_FLAGS).
 *
 * `--no-rehash-snapshot`: by default V8 picks a new hash seed for every process and, on restoring a snapshot,
 * recomputes every string's hash and rebuilds every hash table it holds with it: 5–7 ms of CPU per start for Keel's
 * blob, on Node 20 and 24 alike (bench/RESULTS.md, issue 33). Without it the restored process keeps the seed the
 * build's process drew at random, so the seed is per installation (the blob is built on the user's machine and is
 * as private as the package's files) instead of per process. Never given without Keel's snapshot: there it would fix
 * the seed baked into the Node binary, the same for every user of that Node (the hash flooding that per-process
 * rehashing exists to prevent).
 */
export const KEEL_SNAPSHOT_FLAGS = ['--no-rehash-snapshot'];
