/**
 * The effects table: for common commands, what their words and flags make them do beyond their text — the
 * paths they write, the folders they read recursively, the programs or inline code they run, the folders they
 * change into. The policy resolves these paths where the shell will touch them and judges them like file paths.
 */
import { has, parseArgs, slice, UNKNOWN, values, type ArgSpec, type ParsedArgs } from './args.js';
import { programName, type Invocation } from './programs.js';
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

const word = (text: string): WordInfo => ({ text, path: text, glob: false });

type Handler = (args: WordInfo[], fx: Effects, name: string) => void;

const writeAll = (list: WordInfo[], fx: Effects, recursive = false) => list.forEach((w) => fx.writes.push({ word: w, recursive }));

/** `cp`, `mv`, `install`, `ln`: the destination (or `-t DIR`) receives the sources. */
function copyLike(spec: ArgSpec, opts: { moves?: boolean; recursiveFlags?: string[]; dirsOnly?: string } = {}): Handler {
  return (args, fx) => {
    const parsed = parseArgs(args, spec);
    const recursive = (opts.recursiveFlags ?? []).some((f) => has(parsed, f));
    if (opts.dirsOnly && has(parsed, opts.dirsOnly)) return writeAll(parsed.operands, fx);
    const targetDir = values(parsed, '-t', '--target-directory')[0];
    const sources = targetDir ? parsed.operands : parsed.operands.slice(0, -1);
    const dest = targetDir ?? parsed.operands[parsed.operands.length - 1];
    if (!dest) return;
    const noTargetDir = has(parsed, '-T', '--no-target-directory');
    fx.writes.push({ word: dest, sources: noTargetDir ? undefined : sources, intoFolder: Boolean(targetDir) || (!noTargetDir && sources.length > 1), recursive });
    if (recursive) fx.recursiveReads.push(...sources);
    if (opts.moves) writeAll(sources, fx, true);
  };
}

/** Operands are written (`touch`, `rm`, `chmod`…); `skip` leading operands are not paths (a mode, an owner). */
function writesOperands(spec: ArgSpec, skip = 0, recursiveFlags: string[] = []): Handler {
  return (args, fx) => {
    const parsed = parseArgs(args, spec);
    const recursive = recursiveFlags.some((f) => has(parsed, f));
    const refSkip = has(parsed, '--reference') ? 0 : skip;
    writeAll(parsed.operands.slice(refSkip), fx, recursive);
  };
}

/** Interpreters: where their inline code is, and whether they read code from stdin. */
function interpreter(codeFlags: string[], spec: ArgSpec): Handler {
  return (args, fx, name) => {
    const parsed = parseArgs(args, { ...spec, posixly: true });
    const code = values(parsed, ...codeFlags);
    for (const c of code) {
      fx.runs.push(`${name} runs inline code`);
      if (c.text !== null) fx.code.push(c.text);
      else fx.code.push('');
    }
    const module = has(parsed, '-m') && name !== 'node';
    if (code.length === 0 && !module && (parsed.operands.length === 0 || parsed.operands[0].text === '-')) fx.stdinCode = true;
  };
}

function gitEffects(args: WordInfo[], fx: Effects): void {
  let i = 0;
  // Global options before the subcommand.
  for (; i < args.length; i++) {
    const w = args[i].text;
    if (w === null) {
      fx.runs.push('git gets a computed option');
      return;
    }
    if (!w.startsWith('-')) break;
    const [flag] = w.split('=');
    const value = w.includes('=') ? slice(args[i], w.indexOf('=') + 1) : undefined;
    if (flag === '-C') fx.workIn.push(args[++i] ?? UNKNOWN);
    else if (flag === '-c' || flag === '--config-env') {
      fx.runs.push(`git ${flag} sets configuration that can run programs`);
      if (!value) i++;
    } else if (flag === '--git-dir' || flag === '--work-tree' || flag === '--exec-path' || flag === '--namespace' || flag === '--super-prefix') {
      if (flag !== '--namespace') fx.runs.push(`git ${flag} points git at other code or configuration`);
      if (!value && flag !== '--exec-path') i++;
    }
  }
  const sub = args[i]?.text;
  const rest = args.slice(i + 1);
  if (sub === undefined) return;
  if (sub === null) {
    fx.runs.push('git runs a computed subcommand');
    return;
  }
  const parsed = parseArgs(rest, { long: ['--output', '--file', '--blob', '--exec', '--extcmd', '--upload-pack', '--receive-pack', '--config', '--template', '--separate-git-dir', '--output-directory'] });
  const opt = (n: string) => has(parsed, n);
  for (const out of values(parsed, '--output')) fx.writes.push({ word: out });
  switch (sub) {
    case 'config': {
      const readOnly = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '-l', '--get-color', '--get-colorbool', '--show-origin', '--show-scope'].some(opt) || ['get', 'list'].includes(parsed.operands[0]?.text ?? '');
      if (readOnly) break;
      const file = rest.findIndex((w) => w.text === '-f' || w.text === '--file');
      const fileEq = rest.find((w) => w.text?.startsWith('--file='));
      if (file !== -1) fx.writes.push({ word: rest[file + 1] ?? UNKNOWN });
      else if (fileEq) fx.writes.push({ word: slice(fileEq, 7) });
      else if (opt('--global')) fx.writes.push({ word: word('~/.gitconfig') });
      else if (opt('--system')) fx.writes.push({ word: word('/etc/gitconfig') });
      else fx.writes.push({ word: word('.git/config') });
      break;
    }
    case 'diff':
    case 'log':
    case 'show':
    case 'whatchanged':
    case 'range-diff':
    case 'diff-tree':
    case 'diff-files':
    case 'diff-index':
    case 'format-patch': {
      if (opt('--ext-diff')) fx.runs.push(`git ${sub} --ext-diff runs an external diff program`);
      if (sub === 'format-patch') {
        const dir = rest.findIndex((w) => w.text === '-o');
        if (dir !== -1) fx.writes.push({ word: rest[dir + 1] ?? UNKNOWN, recursive: true });
        for (const d of values(parsed, '--output-directory')) fx.writes.push({ word: d, recursive: true });
      }
      break;
    }
    case 'difftool':
    case 'mergetool':
      fx.runs.push(`git ${sub} runs an external tool`);
      break;
    case 'grep':
      if (opt('-O') || opt('--open-files-in-pager')) fx.runs.push('git grep -O runs a pager');
      break;
    case 'rebase':
      if (opt('-x') || opt('--exec')) fx.runs.push('git rebase --exec runs commands');
      break;
    case 'bisect':
      if (parsed.operands[0]?.text === 'run') fx.runs.push('git bisect run runs commands');
      break;
    case 'submodule':
      if (parsed.operands.some((w) => w.text === 'foreach')) fx.runs.push('git submodule foreach runs commands');
      break;
    case 'filter-branch':
    case 'filter-repo':
      fx.runs.push(`git ${sub} runs filters`);
      break;
    case 'clone':
    case 'fetch':
    case 'pull':
    case 'ls-remote':
    case 'push':
    case 'archive':
      if (opt('-u') || opt('--upload-pack') || opt('--receive-pack') || opt('--exec') || opt('-c') || opt('--config') || opt('--template')) fx.runs.push(`git ${sub} is given a program or configuration to run`);
      if (sub === 'archive') {
        const o = rest.findIndex((w) => w.text === '-o');
        if (o !== -1) fx.writes.push({ word: rest[o + 1] ?? UNKNOWN });
      }
      if (sub === 'clone' && parsed.operands[1]) fx.writes.push({ word: parsed.operands[1], recursive: true });
      break;
    case 'worktree':
      if (parsed.operands[0]?.text === 'add' && parsed.operands[1]) fx.writes.push({ word: parsed.operands[1], recursive: true });
      break;
    case 'init':
      if (opt('--template') || opt('--separate-git-dir')) fx.runs.push(`git init ${opt('--template') ? '--template' : '--separate-git-dir'} copies hooks or config from elsewhere`);
      break;
    case 'hook':
      fx.runs.push('git hook runs hooks');
      break;
    default:
      break;
  }
}

function tarEffects(args: WordInfo[], fx: Effects): void {
  // The first word may be a bundle of letters without a dash (`tar xzf a.tgz`).
  const first = args[0]?.text;
  const words = first && /^[a-zA-Z]+$/.test(first) ? [word(`-${first}`), ...args.slice(1)] : args;
  const parsed = parseArgs(words, { short: 'fCIFTXbgHKLNV', long: ['--file', '--directory', '--use-compress-program', '--to-command', '--info-script', '--new-volume-script', '--rsh-command', '--files-from', '--exclude-from', '--checkpoint-action', '--index-file', '--rmt-command'] });
  for (const o of ['--to-command', '--use-compress-program', '-I', '--info-script', '--new-volume-script', '-F', '--rsh-command', '--rmt-command']) {
    if (has(parsed, o)) fx.runs.push(`tar ${o} runs a program`);
  }
  if (parsed.options.some((o) => o.name === '--checkpoint-action' && (o.value?.text === null || /exec/.test(o.value?.text ?? '')))) fx.runs.push('tar --checkpoint-action=exec runs a program');
  const dir = values(parsed, '-C', '--directory')[0] ?? word('.');
  const archive = values(parsed, '-f', '--file');
  if (has(parsed, '-x', '--extract', '--get')) {
    fx.writes.push({ word: dir, recursive: true });
  } else if (has(parsed, '-c', '--create', '-r', '--append', '-u', '--update', '-A', '--catenate', '--concatenate', '--delete')) {
    for (const a of archive) if (a.text !== '-') fx.writes.push({ word: a });
    fx.recursiveReads.push(...parsed.operands.map((o) => (dir.text === '.' ? o : { ...o, path: o.path && dir.path && !o.path.startsWith('/') ? `${dir.path}/${o.path}` : o.path })));
  }
  if (has(parsed, '--index-file')) writeAll(values(parsed, '--index-file'), fx);
}

function curlEffects(args: WordInfo[], fx: Effects): void {
  const parsed = parseArgs(args, { short: 'oDcKTdFHuXAeErbwUxzmYyPCQ', long: ['--output', '--dump-header', '--cookie-jar', '--config', '--upload-file', '--data', '--data-binary', '--data-raw', '--data-urlencode', '--form', '--trace', '--trace-ascii', '--stderr', '--libcurl', '--etag-save', '--hsts', '--alt-svc', '--output-dir', '--cookie', '--netrc-file', '--header', '--user', '--request', '--proxy', '--url', '--write-out'] });
  for (const w of values(parsed, '-o', '--output', '-D', '--dump-header', '-c', '--cookie-jar', '--trace', '--trace-ascii', '--stderr', '--libcurl', '--etag-save', '--hsts', '--alt-svc')) {
    if (w.text !== '-' && w.text !== '/dev/null') fx.writes.push({ word: w });
  }
  const outDir = values(parsed, '--output-dir')[0];
  if (has(parsed, '-O', '--remote-name', '--remote-name-all', '-J', '--remote-header-name')) {
    const urls = [...parsed.operands, ...values(parsed, '--url')];
    for (const u of urls) fx.writes.push({ word: remoteName(u, outDir) });
  }
  if (has(parsed, '-K', '--config')) fx.runs.push('curl --config reads options from a file');
  for (const w of values(parsed, '-T', '--upload-file', '--netrc-file', '-b', '--cookie')) fx.reads.push(w);
  for (const w of values(parsed, '-d', '--data', '--data-binary', '--data-urlencode', '-F', '--form')) {
    const at = w.text?.indexOf('@') ?? -1;
    if (w.text === null) fx.reads.push(UNKNOWN);
    else if (at !== -1) fx.reads.push(slice(w, at + 1));
    if (w.text?.includes('<')) fx.reads.push(slice(w, w.text.indexOf('<') + 1));
  }
  for (const u of parsed.operands) if (u.text?.startsWith('file://')) fx.reads.push(slice(u, 7));
}

/** Where `curl -O`/`wget` save a URL: its last path segment, in `dir` (or the working folder). */
function remoteName(url: WordInfo, dir?: WordInfo): WordInfo {
  if (url.text === null || (dir && dir.path === null)) return UNKNOWN;
  let name: string;
  try {
    name = new URL(url.text).pathname.split('/').pop() || 'index.html';
  } catch {
    return UNKNOWN;
  }
  const decoded = decodeURIComponent(name);
  return word(dir ? `${dir.path}/${decoded}` : decoded);
}

function wgetEffects(args: WordInfo[], fx: Effects): void {
  const parsed = parseArgs(args, { short: 'OoaPieDtTUwQlAR', long: ['--output-document', '--output-file', '--append-output', '--directory-prefix', '--input-file', '--execute', '--post-file', '--body-file', '--load-cookies', '--save-cookies', '--config', '--user-agent', '--header', '--tries', '--timeout', '--wait', '--level', '--accept', '--reject', '--use-askpass'] });
  const named = values(parsed, '-O', '--output-document');
  for (const w of [...named, ...values(parsed, '-o', '--output-file', '-a', '--append-output', '--save-cookies')]) if (w.text !== '-' && w.text !== '/dev/null') fx.writes.push({ word: w });
  const prefix = values(parsed, '-P', '--directory-prefix')[0];
  if (named.length === 0) {
    if (has(parsed, '-r', '--recursive', '-m', '--mirror', '-p', '--page-requisites', '-x', '--force-directories')) fx.writes.push({ word: prefix ?? word('.'), recursive: true });
    else for (const u of parsed.operands) fx.writes.push({ word: remoteName(u, prefix) });
  }
  for (const w of values(parsed, '-i', '--input-file', '--post-file', '--body-file', '--load-cookies')) fx.reads.push(w);
  if (has(parsed, '-e', '--execute', '--config', '--use-askpass')) fx.runs.push('wget is given commands or a program to run');
}

/** `sed` scripts: the `e` command and `s///e` run programs, `w`/`W` and `s///w` write files, `r`/`R` read them. */
export function sedScriptEffects(script: string): { runs: boolean; writes: string[]; reads: string[]; unclear: boolean } {
  const out = { runs: false, writes: [] as string[], reads: [] as string[], unclear: false };
  let i = 0;
  const n = script.length;
  const skipSpace = () => {
    while (i < n && /[\s;]/.test(script[i])) i++;
  };
  const restOfLine = () => {
    const end = script.indexOf('\n', i);
    const text = script.slice(i, end === -1 ? n : end).trim();
    i = end === -1 ? n : end + 1;
    return text;
  };
  const delimited = (delim: string) => {
    // Skips one delimited part (a regex or a replacement), honouring backslash escapes.
    while (i < n && script[i] !== delim) i += script[i] === '\\' ? 2 : 1;
    i++;
  };
  const address = () => {
    for (let part = 0; part < 2; part++) {
      if (script[i] === '/' || script[i] === '\\') {
        const delim = script[i] === '\\' ? script[++i] : '/';
        i++;
        delimited(delim);
        while (i < n && /[IM]/.test(script[i])) i++;
      } else while (i < n && /[0-9$~+]/.test(script[i])) i++;
      if (script[i] === ',' && part === 0) i++;
      else break;
    }
    while (i < n && /[\s!]/.test(script[i])) i++;
  };
  for (let guard = 0; guard < 10_000; guard++) {
    skipSpace();
    if (i >= n) return out;
    if (script[i] === '#') {
      restOfLine();
      continue;
    }
    if (script[i] === '}' ) {
      i++;
      continue;
    }
    address();
    const c = script[i++];
    if (c === undefined) return out;
    if (c === '{') continue;
    if (c === 'e') {
      out.runs = true;
      restOfLine();
    } else if (c === 'w' || c === 'W') out.writes.push(restOfLine());
    else if (c === 'r' || c === 'R') out.reads.push(restOfLine());
    else if (c === 'a' || c === 'i' || c === 'c') {
      // Text to the end of the line (GNU one-liner form), with backslash-newline continuations.
      while (i < n && script[i] !== '\n') i += script[i] === '\\' ? 2 : 1;
    } else if (c === 's' || c === 'y') {
      const delim = script[i++];
      if (delim === undefined || delim === '\n' || delim === '\\') {
        out.unclear = true;
        return out;
      }
      delimited(delim);
      delimited(delim);
      if (c === 's') {
        while (i < n && /[gpiImMe0-9w]/.test(script[i])) {
          const flag = script[i++];
          if (flag === 'e') out.runs = true;
          if (flag === 'w') {
            out.writes.push(restOfLine());
            break;
          }
        }
      }
    } else if (c === 'b' || c === 't' || c === 'T' || c === ':' || c === 'v' || c === 'l' || c === 'L' || c === 'q' || c === 'Q') {
      while (i < n && !/[;\n}]/.test(script[i])) i++;
    } else if (!/[=dDgGhHnNpPxzF]/.test(c)) {
      out.unclear = true;
      return out;
    }
  }
  out.unclear = true;
  return out;
}

function sedEffects(args: WordInfo[], fx: Effects): void {
  const parsed = parseArgs(args, { short: 'efl', long: ['--expression', '--file', '--line-length'] });
  const inPlace = parsed.options.some((o) => o.name === '-i' || o.name === '--in-place');
  const scripts = values(parsed, '-e', '--expression');
  const files = [...parsed.operands];
  const scriptFiles = values(parsed, '-f', '--file');
  if (scripts.length === 0 && scriptFiles.length === 0) scripts.push(files.shift() ?? UNKNOWN);
  if (scriptFiles.length > 0) fx.runs.push('sed runs a script from a file');
  if (!has(parsed, '--sandbox')) {
    for (const script of scripts) {
      if (script.text === null) {
        fx.runs.push('sed runs a computed script');
        continue;
      }
      const seen = sedScriptEffects(script.text);
      if (seen.unclear) fx.runs.push('sed gets a script Keel cannot read');
      if (seen.runs) fx.runs.push('sed runs a command (the e command or the s///e flag)');
      for (const w of seen.writes) fx.writes.push({ word: w === '/dev/stdout' || w === '/dev/stderr' ? word('/dev/null') : word(w) });
      for (const r of seen.reads) fx.reads.push(word(r));
    }
  }
  if (inPlace) writeAll(files, fx);
}

function perlEffects(args: WordInfo[], fx: Effects): void {
  let inPlace = false;
  let i = 0;
  for (; i < args.length; i++) {
    const w = args[i].text;
    if (w === null) {
      fx.runs.push('perl gets a computed option');
      return;
    }
    if (w === '--' || !w.startsWith('-') || w === '-') break;
    const letters = w.slice(1);
    for (let j = 0; j < letters.length; j++) {
      const l = letters[j];
      if (l === 'i') {
        inPlace = true;
        break; // the rest is the backup suffix
      }
      if (l === 'e' || l === 'E') {
        fx.runs.push('perl runs inline code');
        const code = j + 1 < letters.length ? letters.slice(j + 1) : args[++i]?.text ?? null;
        fx.code.push(code ?? '');
        break;
      }
      if ('IMmdxlC0'.includes(l)) break; // these take the rest of the word
    }
  }
  const files = args.slice(i).filter((w) => w.text !== '--');
  if (fx.code.length === 0 && files.length === 0) fx.stdinCode = true;
  if (inPlace) writeAll(fx.code.length > 0 ? files : files.slice(1), fx);
}

function awkEffects(args: WordInfo[], fx: Effects, name: string): void {
  const parsed = parseArgs(args, { short: 'FvfEil', long: ['--field-separator', '--assign', '--file', '--exec', '--include', '--load', '--source'], posixly: true });
  if (has(parsed, '-f', '--file', '-E', '--exec', '-i', '--include', '-l', '--load')) fx.runs.push(`${name} runs a program from a file`);
  const sources = values(parsed, '--source');
  const program = has(parsed, '-f', '--file', '-E', '--exec') ? undefined : parsed.operands.shift();
  for (const p of [...sources, ...(program ? [program] : [])]) {
    if (p.text === null) {
      fx.runs.push(`${name} runs a computed program`);
      continue;
    }
    if (/\bsystem\s*\(|\|&?\s*getline|\b(?:print|printf)\b[^;{}]*[>|]|@load|@include|\bclose\s*\(|\bfflush\s*\(/.test(p.text)) {
      fx.runs.push(`${name}'s program runs commands or writes files (system(), print > file, | getline)`);
      fx.code.push(p.text);
    } else if (/getline\s*</.test(p.text)) fx.code.push(p.text);
  }
}

function findEffects(args: WordInfo[], fx: Effects): void {
  const starts: WordInfo[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const w = args[i].text;
    if (w !== null && (w.startsWith('-') || w === '(' || w === '!')) break;
    starts.push(args[i]);
  }
  if (starts.length === 0) starts.push(word('.'));
  const rest = args.slice(i);
  for (let j = 0; j < rest.length; j++) {
    const w = rest[j].text;
    if (w === '-delete') {
      for (const s of starts) fx.writes.push({ word: s, recursive: true });
    } else if (w === '-exec' || w === '-execdir' || w === '-ok' || w === '-okdir') {
      fx.runs.push(`find ${w} runs a program on every match`);
      fx.recursiveReads.push(...starts);
    } else if (w === '-fprint' || w === '-fprint0' || w === '-fls' || w === '-fprintf') {
      fx.writes.push({ word: rest[j + 1] ?? UNKNOWN });
    } else if (w === null) fx.runs.push('find gets a computed expression');
  }
}

function grepEffects(args: WordInfo[], fx: Effects, name: string): void {
  const recursiveTool = ['rg', 'ag', 'ack', 'ack-grep'].includes(name);
  const parsed = parseArgs(args, recursiveTool ? { short: 'efgtTjmABCMEr', long: ['--regexp', '--file', '--glob', '--type', '--type-not', '--threads', '--max-count', '--after-context', '--before-context', '--context', '--max-columns', '--encoding', '--replace', '--pre', '--pre-glob', '--ignore-file', '--sort', '--sortr', '--type-add', '--max-depth', '--path-separator'] } : { short: 'efmABCdD', long: ['--regexp', '--file', '--max-count', '--after-context', '--before-context', '--context', '--directories', '--devices', '--label', '--include', '--exclude', '--exclude-dir', '--exclude-from', '--binary-files', '--color', '--colour'] });
  if (has(parsed, '--pre')) fx.runs.push(`${name} --pre runs a program on every file`);
  const recursive = recursiveTool || has(parsed, '-r', '-R', '--recursive', '--dereference-recursive') || values(parsed, '-d', '--directories').some((v) => v.text === 'recurse');
  if (!recursive) return;
  const paths = values(parsed, '-e', '--regexp', '-f', '--file').length > 0 ? parsed.operands : parsed.operands.slice(1);
  fx.recursiveReads.push(...(paths.length > 0 ? paths : [word('.')]));
}

const CODE_FLAGS: Record<string, [string[], ArgSpec]> = {
  python: [['-c'], { short: 'cmWXQ', long: ['--check-hash-based-pycs'] }],
  node: [['-e', '--eval', '-p', '--print'], { short: 'epr', long: ['--eval', '--print', '--require', '--import', '--loader', '--experimental-loader', '--input-type', '--env-file', '--conditions'] }],
  ruby: [['-e'], { short: 'eIrCEF', long: [] }],
  php: [['-r', '-B', '-R', '-E'], { short: 'rBREcdzft', long: [] }],
  lua: [['-e'], { short: 'el', long: [] }],
  Rscript: [['-e'], { short: 'e', long: [] }],
  osascript: [['-e'], { short: 'el', long: [] }],
  pwsh: [['-c', '-Command', '-command', '-EncodedCommand'], { short: 'c', long: [] }],
  bun: [['-e', '--eval', '-p', '--print'], { short: 'ep', long: ['--eval', '--print'] }],
  tclsh: [[], {}],
};

function codeFlagsOf(name: string): [string[], ArgSpec] | undefined {
  if (/^python[0-9.]*$/.test(name) || name === 'pypy' || name === 'pypy3') return CODE_FLAGS.python;
  if (name === 'nodejs' || name === 'deno') return CODE_FLAGS.node;
  return CODE_FLAGS[name];
}

/** Builtins that take variable names: a name with a subscript (`a[$(cmd)]`) runs the code in it. */
function assignsNames(name: string, args: WordInfo[], fx: Effects): void {
  const names: WordInfo[] = [];
  if (name === 'printf') {
    const v = args.findIndex((w) => w.text === '-v' || w.text?.startsWith('-v'));
    if (v !== -1) {
      fx.runs.push('printf -v assigns a shell variable');
      names.push(args[v].text === '-v' ? args[v + 1] ?? UNKNOWN : slice(args[v], 2));
    }
  } else if (name === 'read' || name === 'mapfile' || name === 'readarray' || name === 'unset' || name === 'getopts' || name === 'wait') {
    names.push(...args.filter((w) => w.text === null || !w.text.startsWith('-')));
  } else if (name === 'test' || name === '[') {
    const v = args.findIndex((w) => w.text === '-v');
    if (v !== -1) names.push(args[v + 1] ?? UNKNOWN);
  }
  if (names.some((w) => w.text === null || w.text.includes('['))) fx.runs.push(`${name} is given a variable name with a subscript, which bash evaluates as code`);
}

const TABLE: Record<string, Handler> = {
  tee: (args, fx) => writeAll(parseArgs(args).operands, fx),
  cp: copyLike({ short: 'tS', long: ['--target-directory', '--suffix', '--backup', '--sparse', '--reflink', '--preserve', '--no-preserve'] }, { recursiveFlags: ['-r', '-R', '-a', '--recursive', '--archive'] }),
  mv: copyLike({ short: 'tS', long: ['--target-directory', '--suffix', '--backup'] }, { moves: true }),
  install: copyLike({ short: 'tSmogC', long: ['--target-directory', '--suffix', '--mode', '--owner', '--group', '--backup', '--strip-program'] }, { dirsOnly: '-d' }),
  ln: copyLike({ short: 'tS', long: ['--target-directory', '--suffix', '--backup'] }),
  link: copyLike({}),
  rsync: (args, fx) => {
    const parsed = parseArgs(args, { short: 'eTfB', long: ['--rsh', '--rsync-path', '--log-file', '--write-batch', '--only-write-batch', '--read-batch', '--files-from', '--exclude-from', '--include-from', '--filter', '--temp-dir', '--partial-dir', '--backup-dir', '--compare-dest', '--copy-dest', '--link-dest', '--password-file', '--chmod', '--exclude', '--include'] });
    if (has(parsed, '-e', '--rsh', '--rsync-path')) fx.runs.push('rsync -e/--rsync-path runs a program');
    writeAll(values(parsed, '--log-file', '--write-batch', '--only-write-batch', '--backup-dir'), fx, true);
    const local = parsed.operands.filter((w) => w.text === null || !/^[^/]*:/.test(w.text));
    const dest = parsed.operands[parsed.operands.length - 1];
    if (dest && local.includes(dest)) fx.writes.push({ word: dest, recursive: true });
    fx.recursiveReads.push(...local.filter((w) => w !== dest));
    if (has(parsed, '--remove-source-files')) writeAll(local.filter((w) => w !== dest), fx, true);
  },
  scp: (args, fx) => {
    const parsed = parseArgs(args, { short: 'cFiJlPSoDX', long: [] });
    if (has(parsed, '-S', '-o', '-F', '-J')) fx.runs.push('scp is given a program or configuration to run');
    const dest = parsed.operands[parsed.operands.length - 1];
    if (dest && (dest.text === null || !/^[^/]*:/.test(dest.text))) fx.writes.push({ word: dest, recursive: true, sources: parsed.operands.slice(0, -1) });
    fx.recursiveReads.push(...parsed.operands.slice(0, -1).filter((w) => w.text === null || !/^[^/]*:/.test(w.text)));
  },
  dd: (args, fx) => {
    for (const a of args) {
      if (a.text === null) fx.writes.push({ word: UNKNOWN });
      else if (a.text.startsWith('of=')) fx.writes.push({ word: slice(a, 3) });
      else if (a.text.startsWith('if=')) fx.reads.push(slice(a, 3));
    }
  },
  touch: writesOperands({ short: 'drt', long: ['--date', '--reference', '--time'] }),
  truncate: writesOperands({ short: 'sro', long: ['--size', '--reference'] }),
  mkdir: writesOperands({ short: 'mZ', long: ['--mode', '--context'] }),
  rmdir: writesOperands({}),
  rm: writesOperands({}, 0, ['-r', '-R', '--recursive']),
  unlink: writesOperands({}),
  shred: writesOperands({ short: 'nsx', long: ['--iterations', '--size', '--random-source'] }),
  mkfifo: writesOperands({ short: 'mZ', long: ['--mode'] }),
  mknod: (args, fx) => writeAll(parseArgs(args, { short: 'mZ' }).operands.slice(0, 1), fx),
  chmod: writesOperands({ long: ['--reference'] }, 1, ['-R', '--recursive']),
  chown: writesOperands({ long: ['--reference', '--from'] }, 1, ['-R', '--recursive']),
  chgrp: writesOperands({ long: ['--reference'] }, 1, ['-R', '--recursive']),
  chattr: writesOperands({ short: 'vp' }, 1, ['-R']),
  setfacl: writesOperands({ short: 'mMxX', long: ['--modify', '--modify-file', '--remove', '--remove-file', '--set', '--set-file'] }, 0, ['-R', '--recursive']),
  sort: (args, fx) => {
    const parsed = parseArgs(args, { short: 'okStT', long: ['--output', '--key', '--buffer-size', '--field-separator', '--temporary-directory', '--compress-program', '--files0-from', '--parallel', '--random-source', '--sort'] });
    writeAll(values(parsed, '-o', '--output'), fx);
    if (has(parsed, '--compress-program')) fx.runs.push('sort --compress-program runs a program');
    fx.reads.push(...values(parsed, '--files0-from', '--random-source'));
  },
  uniq: (args, fx) => {
    const parsed = parseArgs(args, { short: 'fsw', long: ['--skip-fields', '--skip-chars', '--check-chars', '--group', '--all-repeated'] });
    if (parsed.operands[1]) fx.writes.push({ word: parsed.operands[1] });
  },
  split: (args, fx) => {
    const parsed = parseArgs(args, { short: 'abClnt', long: ['--suffix-length', '--bytes', '--line-bytes', '--lines', '--number', '--separator', '--additional-suffix', '--filter'] });
    if (has(parsed, '--filter')) fx.runs.push('split --filter runs a command');
    fx.writes.push({ word: parsed.operands[1] ?? word('x') });
  },
  csplit: (args, fx) => {
    const parsed = parseArgs(args, { short: 'bfn', long: ['--suffix-format', '--prefix', '--digits'] });
    fx.writes.push({ word: values(parsed, '-f', '--prefix')[0] ?? word('xx') });
  },
  patch: (args, fx) => {
    const parsed = parseArgs(args, { short: 'oidpBDFiFrVYzg', long: ['--output', '--directory', '--input', '--strip', '--reject-file', '--prefix', '--suffix'] });
    if (has(parsed, '--dry-run')) return;
    writeAll(values(parsed, '-o', '--output', '-r', '--reject-file'), fx);
    // The patch names the files it changes.
    fx.writes.push({ word: UNKNOWN });
  },
  unzip: (args, fx) => {
    const parsed = parseArgs(args, { short: 'dxP', long: [] });
    if (has(parsed, '-l', '-t', '-v', '-Z', '-p', '-c')) return;
    fx.writes.push({ word: values(parsed, '-d')[0] ?? word('.'), recursive: true });
  },
  zip: (args, fx) => {
    const parsed = parseArgs(args, { short: 'bnPtxiTU', long: ['--unzip-command', '--temp-path', '--password', '--exclude', '--include'] });
    if (has(parsed, '-TT', '--unzip-command')) fx.runs.push('zip -TT runs a program');
    const args0 = args.find((w) => w.text === '-TT');
    if (args0) fx.runs.push('zip -TT runs a program');
    if (parsed.operands[0]) fx.writes.push({ word: parsed.operands[0] });
    if (has(parsed, '-r', '--recurse-paths', '-R')) fx.recursiveReads.push(...parsed.operands.slice(1));
  },
  '7z': (args, fx) => {
    const mode = args[0]?.text;
    if (mode === 'x' || mode === 'e') {
      const out = args.find((w) => w.text?.startsWith('-o'));
      fx.writes.push({ word: out ? slice(out, 2) : word('.'), recursive: true });
    } else if (mode === 'a' || mode === 'u' || mode === 'd') fx.writes.push({ word: args.slice(1).find((w) => w.text === null || !w.text.startsWith('-')) ?? UNKNOWN });
  },
  cpio: (args, fx) => {
    const parsed = parseArgs(args, { short: 'DEFIOHMRs', long: ['--directory', '--file', '--format', '--rsh-command'] });
    if (has(parsed, '--rsh-command')) fx.runs.push('cpio --rsh-command runs a program');
    if (has(parsed, '-i', '--extract', '-p', '--pass-through')) fx.writes.push({ word: values(parsed, '-D', '--directory')[0] ?? parsed.operands[0] ?? word('.'), recursive: true });
    writeAll(values(parsed, '-O'), fx);
  },
  gzip: compressor,
  gunzip: compressor,
  bzip2: compressor,
  bunzip2: compressor,
  xz: compressor,
  unxz: compressor,
  zstd: compressor,
  unzstd: compressor,
  lz4: compressor,
  curl: curlEffects,
  wget: wgetEffects,
  sed: sedEffects,
  gsed: sedEffects,
  perl: perlEffects,
  awk: awkEffects,
  gawk: awkEffects,
  mawk: awkEffects,
  nawk: awkEffects,
  busybox: () => undefined,
  find: findEffects,
  grep: grepEffects,
  egrep: grepEffects,
  fgrep: grepEffects,
  rg: grepEffects,
  ag: grepEffects,
  ack: grepEffects,
  git: gitEffects,
  tar: tarEffects,
  bsdtar: tarEffects,
  xargs: (args, fx) => {
    fx.runs.push('xargs runs a program with arguments from its input');
    const parsed = parseArgs(args, { short: 'adEILnPs', long: ['--arg-file', '--delimiter', '--eof', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'], posixly: true });
    fx.reads.push(...values(parsed, '-a', '--arg-file'));
  },
  env: (args, fx) => {
    const parsed = parseArgs(args, { short: 'uCS', long: ['--unset', '--chdir', '--split-string'], posixly: true });
    fx.workIn.push(...values(parsed, '-C', '--chdir'));
    if (has(parsed, '-S', '--split-string')) fx.runs.push('env -S runs a command line given as one string');
  },
  time: (args, fx) => writeAll(values(parseArgs(args, { short: 'fo', long: ['--format', '--output'], posixly: true }), '-o', '--output'), fx),
  strace: (args, fx) => writeAll(values(parseArgs(args, { short: 'oepsuEIaPSXb', long: ['--output'], posixly: true }), '-o', '--output'), fx),
  ltrace: (args, fx) => writeAll(values(parseArgs(args, { short: 'oepsuanlxL', long: ['--output'], posixly: true }), '-o', '--output'), fx),
  make: (args, fx) => {
    const parsed = parseArgs(args, { short: 'CfIjloW', long: ['--directory', '--file', '--makefile', '--include-dir', '--jobs', '--load-average', '--old-file', '--what-if', '--eval'] });
    fx.workIn.push(...values(parsed, '-C', '--directory'));
    if (has(parsed, '--eval')) fx.runs.push('make --eval runs make code given inline');
  },
  npm: (args, fx) => {
    const parsed = parseArgs(args, { short: 'Cw', long: ['--prefix', '--workspace', '--cache', '--userconfig', '--globalconfig', '--script-shell', '--node-options'] });
    fx.workIn.push(...values(parsed, '--prefix', '-C'));
    if (has(parsed, '--script-shell', '--userconfig', '--globalconfig', '--node-options')) fx.runs.push('npm is given a shell, configuration or node options that run code');
  },
  ssh: (args, fx) => {
    const parsed = parseArgs(args, { short: 'oFiJLRDWbceEISlmpQw', long: [] });
    if (values(parsed, '-o').some((o) => o.text === null || /ProxyCommand|LocalCommand|KnownHostsCommand|Match|Include/i.test(o.text)) || has(parsed, '-F')) fx.runs.push('ssh is given options that run local commands');
  },
  'ssh-keygen': (args, fx) => writeAll(values(parseArgs(args, { short: 'fCNtbZaIOnsVzPm' }), '-f'), fx),
  openssl: (args, fx) => {
    const out = args.findIndex((w) => w.text === '-out' || w.text === '-keyout');
    if (out !== -1) fx.writes.push({ word: args[out + 1] ?? UNKNOWN });
  },
  vim: editor,
  vi: editor,
  nvim: editor,
  ex: editor,
  ed: editor,
  nano: editor,
  emacs: editor,
  enable: (args, fx) => {
    if (args.some((w) => w.text === null || w.text.startsWith('-f'))) fx.runs.push('enable -f loads a shared library');
  },
  hash: (args, fx) => {
    if (args.some((w) => w.text === '-p')) fx.runs.push('hash -p points a command name at another program');
  },
  complete: (args, fx) => {
    if (args.some((w) => w.text === '-C' || w.text === '-F')) fx.runs.push('complete -C/-F runs code on completion');
  },
  source: (args, fx) => fx.runs.push(`source runs the script ${args[0]?.text ?? '(computed)'} in this shell`),
  '.': (args, fx) => fx.runs.push(`. runs the script ${args[0]?.text ?? '(computed)'} in this shell`),
};

function compressor(args: WordInfo[], fx: Effects): void {
  const parsed = parseArgs(args, { short: 'S', long: ['--suffix'] });
  if (has(parsed, '-c', '--stdout', '-l', '--list', '-t', '--test')) return;
  for (const w of parsed.operands) {
    fx.writes.push({ word: w });
    if (w.text !== null && /\.[a-z0-9]+$/i.test(w.text)) fx.writes.push({ word: { ...w, text: w.text.replace(/\.[a-z0-9]+$/i, ''), path: w.path?.replace(/\.[a-z0-9]+$/i, '') ?? null } });
  }
}

function editor(args: WordInfo[], fx: Effects, name: string): void {
  if (args.some((w) => w.text === null || /^(-c|-S|--cmd|-u|--eval|-l|--load|--script|-x|-f|--batch)$/.test(w.text) || w.text.startsWith('+'))) fx.runs.push(`${name} is given commands to run`);
  writeAll(args.filter((w) => w.text === null || !w.text.startsWith('-') && !w.text.startsWith('+')), fx);
}

/** The effects of one invocation (the program and its arguments). */
export function effectsOf(inv: Invocation): Effects {
  const fx = noEffects();
  const name = programName(inv.words[0]?.text);
  if (name === undefined) return fx;
  const args = inv.words.slice(1);
  if (name === 'cd' || name === 'pushd') {
    const target = args.find((w) => w.text === null || !/^-[LPe@]+$/.test(w.text));
    fx.cd = target === undefined ? (name === 'cd' ? 'home' : 'unknown') : target.text === '-' ? 'unknown' : target;
    return fx;
  }
  if (name === 'popd') {
    fx.cd = 'unknown';
    return fx;
  }
  if (inv.chdir) fx.workIn.push(inv.chdir);
  assignsNames(name, args, fx);
  const code = codeFlagsOf(name);
  if (code) interpreter(code[0], code[1])(args, fx, name);
  if (name === 'deno' && args[0]?.text === 'eval') {
    fx.runs.push('deno eval runs inline code');
    fx.code.push(args[1]?.text ?? '');
  }
  TABLE[name]?.(args, fx, name);
  return fx;
}
