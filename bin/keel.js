#!/usr/bin/env node
// `--version` and `--help` answer from text the build wrote (dist/fast-path.json) without loading the CLI,
// which costs about 0.1 s; every other invocation loads the bundled CLI.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const fast = args.length === 1 && !process.env.KEEL_NO_FAST_PATH ? fastAnswer(args[0]) : undefined;
if (fast !== undefined) process.stdout.write(fast);
else {
  const { main } = await import('../dist/bin/keel.js');
  main(args).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`keel: ${err && err.message ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}

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
