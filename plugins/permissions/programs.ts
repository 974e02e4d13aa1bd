/**
 * Which programs a simple command really runs: the command itself, what its wrappers run (`sudo`, `env -i`,
 * `nice -n 5`, `timeout 5`, `xargs`, …) and what `find -exec` runs, each with its program name normalised
 * (`/bin/rm` → `rm`). Deny rules match every one of them; effects are judged on every one of them.
 */
import type { ShellWord, WordInfo } from './shell.js';

export interface Invocation {
  words: WordInfo[];
  /** How the program is reached, for messages: '' for the command itself, else e.g. `find -exec`, `sudo`. */
  via: string;
  /** Relative paths of this program resolve in a folder known only at run time (`find -execdir`). */
  cwdUnknown?: boolean;
  /** A folder the wrapper changes into before running it (`env -C dir`). */
  chdir?: WordInfo;
}

/** The last part of a program path: `/bin/rm` → `rm`. */
export function programName(word: ShellWord | undefined): string | undefined {
  if (word === null || word === undefined) return undefined;
  return word.split('/').pop() || word;
}

interface WrapperSpec {
  /** Short (`-u`) and long (`--user`) options that take the next word as their value. */
  valued: string[];
  /** Positional words between the options and the program (`timeout 5`, `chroot /root`, `flock file`). */
  positional?: number;
  /** The wrapper stops being a wrapper when one of these options is present (`command -v rm` runs nothing). */
  inert?: string[];
}

const WRAPPERS: Record<string, WrapperSpec> = {
  sudo: { valued: ['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '-T', '--user', '--group', '--host', '--prompt', '--chdir', '--role', '--type', '--other-user', '--command-timeout', '--close-from'], inert: ['-l', '-v', '-k', '-K', '-V', '--list', '--validate'] },
  doas: { valued: ['-u', '-C'] },
  command: { valued: [], inert: ['-v', '-V'] },
  builtin: { valued: [] },
  exec: { valued: ['-a'] },
  nohup: { valued: [] },
  nice: { valued: ['-n', '--adjustment'] },
  time: { valued: ['-f', '-o', '--format', '--output'] },
  env: { valued: ['-u', '-C', '-S', '--unset', '--chdir', '--split-string'] },
  xargs: { valued: ['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--eof', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'] },
  busybox: { valued: [] },
  stdbuf: { valued: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  ionice: { valued: ['-c', '-n', '-p', '-P', '-u', '--class', '--classdata', '--pid', '--pgid', '--uid'] },
  chroot: { valued: ['--userspec', '--groups'], positional: 1 },
  setsid: { valued: [] },
  timeout: { valued: ['-s', '-k', '--signal', '--kill-after'], positional: 1 },
  taskset: { valued: [], positional: 1 },
  flock: { valued: ['-w', '-E', '--timeout', '--conflict-exit-code'], positional: 1 },
  strace: { valued: ['-o', '-e', '-p', '-s', '-u', '-E', '-I', '-a', '-P', '-S', '-X', '-b'] },
  ltrace: { valued: ['-o', '-e', '-p', '-s', '-u', '-a', '-n', '-l', '-x', '-L'] },
  unbuffer: { valued: [] },
  caffeinate: { valued: [] },
  catchsegv: { valued: [] },
  sg: { valued: [], positional: 1 },
  runuser: { valued: ['-u', '-g', '-G', '--user', '--group'] },
  prlimit: { valued: ['-p', '--pid'] },
  'git-lfs': { valued: [] },
};

const MAX_DEPTH = 8;

/** The command itself, then each program its wrappers and `find -exec` run. */
export function invocations(words: WordInfo[], depth = 0): Invocation[] {
  const out: Invocation[] = [{ words, via: '' }];
  if (depth > MAX_DEPTH) return out;
  let rest = words;
  for (let guard = 0; guard < MAX_DEPTH; guard++) {
    const name = programName(rest[0]?.text);
    if (name === undefined) return out;
    if (name === 'find') {
      // `find … -delete` removes what it finds: a deny of `rm` holds for it too.
      if (rest.some((w) => w.text === '-delete')) out.push({ words: [{ text: 'rm', path: 'rm', glob: false }, ...findStarts(rest)], via: 'find -delete' });
      for (const inner of findCommands(rest)) {
        for (const nested of invocations(inner.words, depth + 1)) out.push({ ...nested, via: nested.via || inner.via, cwdUnknown: inner.cwdUnknown || nested.cwdUnknown });
      }
      return out;
    }
    const spec = WRAPPERS[name];
    if (!spec) return out;
    const unwrapped = unwrapOnce(name, spec, rest);
    if (!unwrapped || unwrapped.words.length === 0) return out;
    rest = unwrapped.words;
    const appended = name === 'xargs' ? [...rest, { text: null, path: null, glob: false }] : rest;
    out.push({ words: appended, via: name, ...(unwrapped.chdir ? { chdir: unwrapped.chdir } : {}) });
    if (name === 'xargs') rest = appended;
  }
  return out;
}

/** The words after a wrapper's options; undefined when the wrapper runs nothing (or only a shell). */
function unwrapOnce(name: string, spec: WrapperSpec, words: WordInfo[]): { words: WordInfo[]; chdir?: WordInfo } | undefined {
  let i = 1;
  let chdir: WordInfo | undefined;
  if (name === 'busybox') return { words: words.slice(1) };
  while (i < words.length) {
    const w = words[i].text;
    if (w === null) return { words: words.slice(i) };
    if (w === '--') {
      i++;
      break;
    }
    if (name === 'env' && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) {
      i++;
      continue;
    }
    if (!w.startsWith('-') || w === '-') break;
    if (spec.inert?.includes(w)) return undefined;
    const long = w.startsWith('--');
    const flag = long ? w.split('=')[0] : w.slice(0, 2);
    if (name === 'env' && (flag === '-C' || flag === '--chdir')) chdir = long && w.includes('=') ? { ...words[i], text: w.slice(w.indexOf('=') + 1), path: w.slice(w.indexOf('=') + 1) } : w.length > 2 && !long ? { ...words[i], text: w.slice(2), path: w.slice(2) } : words[i + 1];
    if (spec.valued.includes(flag) && (long ? !w.includes('=') : w.length === 2)) i += 2;
    else i++;
  }
  i += spec.positional ?? 0;
  if (name === 'flock' && words[i]?.text !== undefined && ['-c', '--command'].includes(words[i].text ?? '')) return undefined;
  if (i >= words.length) return undefined;
  return { words: words.slice(i), ...(chdir ? { chdir } : {}) };
}

/** The folders `find` searches: the words before its first test or action (`.` when none). */
function findStarts(words: WordInfo[]): WordInfo[] {
  const starts: WordInfo[] = [];
  for (const w of words.slice(1)) {
    if (w.text !== null && (w.text.startsWith('-') || w.text === '(' || w.text === '!')) break;
    starts.push(w);
  }
  return starts.length > 0 ? starts : [{ text: '.', path: '.', glob: false }];
}

/** The commands `find -exec/-execdir/-ok/-okdir … ;` runs; `{}` (the found path) is unknown. */
function findCommands(words: WordInfo[]): Array<{ words: WordInfo[]; via: string; cwdUnknown: boolean }> {
  const out: Array<{ words: WordInfo[]; via: string; cwdUnknown: boolean }> = [];
  for (let i = 1; i < words.length; i++) {
    const action = words[i].text;
    if (action !== '-exec' && action !== '-execdir' && action !== '-ok' && action !== '-okdir') continue;
    const inner: WordInfo[] = [];
    let j = i + 1;
    for (; j < words.length && words[j].text !== ';' && words[j].text !== '+'; j++) {
      const w = words[j];
      inner.push(w.text !== null && w.text.includes('{}') ? { text: null, path: null, glob: false } : w);
    }
    if (inner.length > 0) out.push({ words: inner, via: `find ${action}`, cwdUnknown: action.endsWith('dir') });
    i = j;
  }
  return out;
}

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox', 'fish']);

/**
 * The script a command runs as a string, when it is literal: `bash -c S`, `eval S…`, `env -S S`, `watch S…`,
 * `trap S SIGNAL`, `su -c S`, `flock f -c S`, or a shell reading a literal here-document.
 */
export function innerScript(argv: ShellWord[], stdin?: ShellWord): string | undefined {
  const head = argv[0];
  const name = programName(head);
  if (name === undefined) return undefined;
  const rest = argv.slice(1);
  const literalRest = rest.every((w) => w !== null);
  if (name === 'eval' && literalRest) return rest.join(' ');
  if (name === 'trap' && typeof rest[0] === 'string' && !rest[0].startsWith('-')) return rest[0];
  if (name === 'env') {
    const at = rest.findIndex((w) => w !== null && (w === '-S' || w.startsWith('--split-string') || /^-[a-zA-Z]*S/.test(w)));
    if (at !== -1) {
      const w = rest[at]!;
      if (w.includes('=')) return w.slice(w.indexOf('=') + 1);
      if (/^-[a-zA-Z]*S.+/.test(w)) return w.slice(w.indexOf('S') + 1);
      return rest[at + 1] ?? undefined;
    }
  }
  if (name === 'watch' && literalRest) {
    let i = 0;
    while (i < rest.length && rest[i]!.startsWith('-')) i += ['-n', '--interval', '-q', '--equexit'].includes(rest[i]!) ? 2 : 1;
    if (i < rest.length) return rest.slice(i).join(' ');
  }
  if (name === 'su' || name === 'flock' || name === 'script') {
    const at = rest.findIndex((w) => w === '-c' || w === '--command');
    if (at !== -1 && typeof rest[at + 1] === 'string') return rest[at + 1]!;
  }
  if (SHELLS.has(name)) {
    const flag = rest.findIndex((w) => w !== null && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w));
    if (flag !== -1) return typeof rest[flag + 1] === 'string' ? rest[flag + 1]! : undefined;
    const script = rest.find((w) => w === null || !w.startsWith('-'));
    if (script === undefined && typeof stdin === 'string') return stdin;
  }
  return undefined;
}
