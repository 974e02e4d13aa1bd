#!/bin/sh
":" //; unset keel_f keel_s keel_d keel_m keel_n keel_l keel_p; [ -n "$KEEL_NO_FAST_PATH" ] || [ $# != 1 ] || case "$1" in -v|--version) keel_f=version;; -h|--help) keel_f=help;; esac
":" //; if [ -n "$keel_f" ] || [ -z "$KEEL_NO_SNAPSHOT$NODE_OPTIONS" ]; then case "$0" in /*/../*|/*/./*|*/..|*/.) ;; /*) [ -L "$0" ] || keel_s=$0;; esac; [ -n "$keel_s" ] || keel_s=$(readlink -f -- "$0") && keel_d=${keel_s%/bin/*}/dist; fi
":" //; if [ -n "$keel_f" ] && [ -n "$keel_d" ] && [ -f "$keel_d/fast-path/$keel_f" ]; then while IFS= read -r keel_l; do printf '%s\n' "$keel_l"; done < "$keel_d/fast-path/$keel_f"; exit 0; fi
":" //; if [ -n "$keel_d" ] && [ -z "$KEEL_NO_SNAPSHOT$NODE_OPTIONS" ] && [ -f "$keel_d/bin/keel.blob" ] && read -r keel_m < "$keel_d/bin/keel.blob.node"; then keel_p=$PATH:; while [ -n "$keel_p" ] && [ -z "$keel_n" ]; do keel_l=${keel_p%%:*}; keel_p=${keel_p#*:}; [ -f "${keel_l:-.}/node" ] && [ -x "${keel_l:-.}/node" ] && keel_n=${keel_l:-.}/node; done; fi
":" //; if [ -n "$keel_n" ] && { [ "$keel_m" = "$keel_n" ] || [ "$keel_m" = "$(readlink -f -- "$keel_n")" ]; } && [ ! "$keel_n" -nt "$keel_d/bin/keel.blob" ]; then exec "$keel_n" --max-semi-space-size=8 --no-rehash-snapshot --snapshot-blob "$keel_d/bin/keel.blob" "$keel_s" "$@"; fi
":" //; exec node --max-semi-space-size=8 "$0" "$@"

// This file is both a shell script and JavaScript; to JavaScript each line above is a string and a comment. The
// shell's variables are its own (keel_*, unset first, never exported), so nothing reaches Keel's environment.
// `--max-semi-space-size=8` is scripts/node-flags.mjs's (the snapshot and code caches were made under it), and
// `--no-rehash-snapshot` its flag for the snapshot's path only (never without the blob: see there).
//
// Run as an executable (`keel`, `npx keel`), the shell lines answer a bare `--version` or `--help` from text the
// build wrote (dist/fast-path/), and otherwise start Node from dist/bin/keel.blob, the V8 start-up snapshot the
// build made of Keel (its modules and libraries already evaluated), provided the `node` on PATH is the one that
// built it and is not newer than the blob, and neither KEEL_NO_SNAPSHOT nor NODE_OPTIONS is set. Failing that they
// run this file with `node`, as `node bin/keel.js` does: the same answers from dist/fast-path/, else the bundled
// CLI without a snapshot (through dist/bin/load.cjs, with its V8 code cache).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const args = process.argv.slice(2);
const fast = args.length === 1 && !process.env.KEEL_NO_FAST_PATH ? fastAnswer(args[0]) : undefined;
if (fast !== undefined) process.stdout.write(fast);
else createRequire(import.meta.url)('../dist/bin/load.cjs').loadKeel().run(args, (specifier) => import(specifier));

function fastAnswer(arg) {
  const key = arg === '--version' || arg === '-v' ? 'version' : arg === '--help' || arg === '-h' ? 'help' : undefined;
  if (!key) return undefined;
  try {
    return readFileSync(new URL(`../dist/fast-path/${key}`, import.meta.url), 'utf8');
  } catch {
    return undefined;
  }
}
