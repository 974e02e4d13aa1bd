#!/bin/sh
":" //; case "$KEEL_NO_SNAPSHOT$NODE_OPTIONS:$#:$1" in :1:--version|:1:-v|:1:--help|:1:-h) ;; :*) s=$(readlink -f -- "$0") && b=${s%/bin/*}/dist/bin/keel.blob && n=$(command -v node) && [ -f "$b" ] && read -r m < "$b.node" && [ "$m" = "$(readlink -f -- "$n")" ] && [ ! "$n" -nt "$b" ] && exec "$n" --snapshot-blob "$b" "$s" "$@";; esac; exec node "$0" "$@"

// This file is both a shell script and JavaScript. Run as an executable (`keel`, `npx keel`), the shell line above
// starts Node from dist/bin/keel.blob, the V8 start-up snapshot the build made of Keel (its modules and libraries
// already evaluated), provided the `node` on PATH is the one that built it and is not newer than the blob, and
// neither KEEL_NO_SNAPSHOT nor NODE_OPTIONS is set; otherwise it runs this file with `node`, as does
// `node bin/keel.js`. To JavaScript that line is a string and a comment.
//
// `--version` and `--help` answer from text the build wrote (dist/fast-path.json) without loading the CLI; every
// other invocation loads the bundled CLI.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const args = process.argv.slice(2);
const fast = args.length === 1 && !process.env.KEEL_NO_FAST_PATH ? fastAnswer(args[0]) : undefined;
if (fast !== undefined) process.stdout.write(fast);
else createRequire(import.meta.url)('../dist/bin/keel.cjs').run(args, (specifier) => import(specifier));

function fastAnswer(arg) {
  const key = arg === '--version' || arg === '-v' ? 'version' : arg === '--help' || arg === '-h' ? 'help' : undefined;
  if (!key) return undefined;
  try {
    const text = JSON.parse(readFileSync(new URL('../dist/fast-path.json', import.meta.url), 'utf8'))[key];
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}
