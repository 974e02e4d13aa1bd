/** A small getopt for the effects table: options (with their values) and operands of one command line. */
import type { WordInfo } from './shell.js';

export interface Option {
  /** `-o`, `--output`; a cluster `-rf` gives `-r` and `-f`. */
  name: string;
  /** The option's value: attached (`-ofile`, `--output=file`) or the next word; undefined for flags. */
  value?: WordInfo;
}

export interface ParsedArgs {
  options: Option[];
  operands: WordInfo[];
  /** A word the parser could not read (computed at run time) stood where an option could be. */
  unknown: boolean;
}

export interface ArgSpec {
  /** Short option letters that take a value (`'oCf'`). */
  short?: string;
  /** Long options that take a value (`['--output', '--directory']`). */
  long?: string[];
  /** Options stop at the first operand (`find`, `xargs`-like), else they may follow operands (GNU). */
  posixly?: boolean;
}

export const UNKNOWN: WordInfo = { text: null, path: null, glob: false };

export function slice(word: WordInfo, from: number): WordInfo {
  return { text: word.text === null ? null : word.text.slice(from), path: word.path === null ? null : word.path.slice(from), glob: word.glob };
}

/** Splits `words` (without the program name) into options and operands. */
export function parseArgs(words: WordInfo[], spec: ArgSpec = {}): ParsedArgs {
  const short = spec.short ?? '';
  const long = spec.long ?? [];
  const out: ParsedArgs = { options: [], operands: [], unknown: false };
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    const w = word.text;
    if (w === null) {
      out.unknown = true;
      out.operands.push(word);
      continue;
    }
    if (w === '--') {
      out.operands.push(...words.slice(i + 1));
      break;
    }
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq === -1 ? w : w.slice(0, eq);
      if (eq !== -1) out.options.push({ name, value: slice(word, eq + 1) });
      else if (long.includes(name)) out.options.push({ name, value: words[++i] ?? UNKNOWN });
      else out.options.push({ name });
      continue;
    }
    if (w.startsWith('-') && w.length > 1) {
      for (let j = 1; j < w.length; j++) {
        const letter = w[j];
        if (short.includes(letter)) {
          out.options.push({ name: `-${letter}`, value: j + 1 < w.length ? slice(word, j + 1) : words[++i] ?? UNKNOWN });
          break;
        }
        out.options.push({ name: `-${letter}` });
      }
      continue;
    }
    out.operands.push(word);
    if (spec.posixly) {
      out.operands.push(...words.slice(i + 1));
      break;
    }
  }
  return out;
}

export function has(args: ParsedArgs, ...names: string[]): boolean {
  return args.options.some((o) => names.includes(o.name));
}

export function values(args: ParsedArgs, ...names: string[]): WordInfo[] {
  return args.options.filter((o) => names.includes(o.name) && o.value).map((o) => o.value!);
}
