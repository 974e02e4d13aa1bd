/** The folder-trust question, asked before the rest of the UI exists (the kernel is rebuilt after a yes). */
import readline from 'node:readline';
import type { TrustQuestion } from '../../kernel/index.js';
import { clean } from './lines.js';
import { asciiStream, isUtf8Locale } from './terminal.js';
import { LineGuard } from './typeahead.js';

/** The trust question as a y/n line; Enter or the end of input means no. */
export async function askTrustPlain(question: TrustQuestion): Promise<boolean> {
  const output = isUtf8Locale(process.env) ? process.stdout : asciiStream(process.stdout);
  const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const rl = readline.createInterface({ input: process.stdin, output, terminal });
  // A line typed before the question could be read (typed ahead while keel started) is not its answer (typeahead.ts).
  const guard = terminal ? new LineGuard(performance.now()) : null;
  let lastKeyAt = -Infinity;
  const onKey = () => {
    const at = performance.now();
    guard?.key({ at, previous: lastKeyAt });
    lastKeyAt = at;
  };
  if (guard) process.stdin.prependListener('keypress', onKey);
  let closed = false;
  const onClose: Array<() => void> = [];
  rl.once('close', () => {
    closed = true;
    for (const f of onClose) f();
  });
  try {
    // The folder's and files' names are the repository's: shown, never obeyed (`clean`).
    output.write(clean(`Do you trust the files in ${question.folder}?\nTrusting it lets these run or load as settings:\n${question.files.map((f) => `  ${f}\n`).join('')}`));
    for (;;) {
      const reply = await new Promise<string | null>((resolve) => {
        if (closed) return resolve(null);
        onClose.push(() => resolve(null));
        rl.question('Trust this folder (remembered)? [y/n]: ', resolve);
      });
      if (reply === null) return false;
      if (guard && !guard.line()) {
        output.write('(keys typed before this question appeared are ignored: read it, then answer)\n');
        continue;
      }
      const word = reply.trim().toLowerCase();
      if (word === 'y' || word === 'yes') return true;
      if (word === 'n' || word === 'no' || word === '') return false;
      output.write('Type y or n.\n');
    }
  } finally {
    process.stdin.off('keypress', onKey);
    rl.close();
  }
}
