/** What the effects table records for one program, and the small helpers its entries share. */
import type { WordInfo } from './shell.js';

export interface WriteTarget {
  /** The written path (text null: known only at run time). */
  word: WordInfo;
  /** Sources copied, moved or linked to `word`: when it is a folder, each lands at `word/<source's name>`. */
  sources?: WordInfo[];
  /** `word` is a folder whatever it is now (`cp -t DIR`, `ln -t DIR`). */
  intoFolder?: boolean;
  /** Everything below the target may change (`rm -r`, `chmod -R`, `tar -x -C`, `cp -r`). */
  recursive?: boolean;
  /**
   * The write is the program's own job, on a path its text names as an operand (`touch f`, `cp a b`, `rm x`),
   * so a rule allowing the text may vouch for it; writes that flags or scripts add (`--output=`, `sed -i`,
   * `sort -o`) never are.
   */
  operand?: boolean;
}

export interface Effects {
  writes: WriteTarget[];
  /** Folders whose whole content the command reads (`grep -r`, `rg`, `tar -c`, `cp -r` sources). */
  recursiveReads: WordInfo[];
  /** Why the command runs programs or code its text does not show (`find -exec`, `git -c`, `python -c`). */
  runs: string[];
  /** Literal inline code (`python -c CODE`): scanned for the paths it names. */
  code: string[];
  /** The program runs code it reads on stdin (`python3 -`, `node` with no script). */
  stdinCode: boolean;
  /** A `cd`/`pushd`: the new folder; `home` for a bare `cd`; `unknown` for `cd -`. */
  cd?: WordInfo | 'home' | 'unknown';
  /** Folders the program works in (`git -C`, `make -C`, `npm --prefix`, `env -C`): confined like a `cd` target. */
  workIn: WordInfo[];
  /** Paths read that are no word of their own (`sed 'r FILE'`, `curl -d @FILE`, `file://` URLs). */
  reads: WordInfo[];
}

export function noEffects(): Effects {
  return { writes: [], recursiveReads: [], runs: [], code: [], stdinCode: false, workIn: [], reads: [] };
}

export const word = (text: string): WordInfo => ({ text, path: text, glob: false });

export type Handler = (args: WordInfo[], fx: Effects, name: string) => void;

export const writeAll = (list: WordInfo[], fx: Effects, recursive = false, operand = false) => list.forEach((w) => fx.writes.push({ word: w, recursive, operand }));
