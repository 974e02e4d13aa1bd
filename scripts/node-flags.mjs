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
