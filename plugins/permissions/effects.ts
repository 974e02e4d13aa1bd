/**
 * The effects table: for common commands, what their words and flags make them do beyond their text — the
 * paths they write, the folders they read recursively, the programs or inline code they run, the folders they
 * change into. The policy resolves these paths where the shell will touch them and judges them like file paths.
 */
import { has, parseArgs, slice, UNKNOWN, values, type ArgSpec } from './args.js';
import { noEffects, word, writeAll, type Effects, type Handler } from './effect-kit.js';
import { compressor, tarEffects } from './effects-archive.js';
import { gitEffects } from './effects-git.js';
import { curlEffects, wgetEffects } from './effects-net.js';
import { awkEffects, perlEffects, sedEffects } from './effects-text.js';
import { programName, type Invocation } from './programs.js';
import type { WordInfo } from './shell.js';

export type { Effects, WriteTarget } from './effect-kit.js';
export { sedScriptEffects } from './effects-text.js';

/** `cp`, `mv`, `install`, `ln`: the destination (or `-t DIR`) receives the sources. */
function copyLike(spec: ArgSpec, opts: { moves?: boolean; recursiveFlags?: string[]; dirsOnly?: string } = {}): Handler {
  return (args, fx) => {
    const parsed = parseArgs(args, spec);
    const recursive = (opts.recursiveFlags ?? []).some((f) => has(parsed, f));
    if (opts.dirsOnly && has(parsed, opts.dirsOnly)) return writeAll(parsed.operands, fx, false, true);
    const targetDir = values(parsed, '-t', '--target-directory')[0];
    const sources = targetDir ? parsed.operands : parsed.operands.slice(0, -1);
    const dest = targetDir ?? parsed.operands[parsed.operands.length - 1];
    if (!dest) return;
    const noTargetDir = has(parsed, '-T', '--no-target-directory');
    fx.writes.push({ word: dest, sources: noTargetDir ? undefined : sources, intoFolder: Boolean(targetDir) || (!noTargetDir && sources.length > 1), recursive, operand: true });
    if (recursive) fx.recursiveReads.push(...sources);
    if (opts.moves) writeAll(sources, fx, true, true);
  };
}

/** Operands are written (`touch`, `rm`, `chmod`…); `skip` leading operands are not paths (a mode, an owner). */
function writesOperands(spec: ArgSpec, skip = 0, recursiveFlags: string[] = []): Handler {
  return (args, fx) => {
    const parsed = parseArgs(args, spec);
    const recursive = recursiveFlags.some((f) => has(parsed, f));
    const refSkip = has(parsed, '--reference') ? 0 : skip;
    writeAll(parsed.operands.slice(refSkip), fx, recursive, true);
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
  tee: (args, fx) => writeAll(parseArgs(args).operands, fx, false, true),
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
    if (dest && local.includes(dest)) fx.writes.push({ word: dest, recursive: true, operand: true });
    fx.recursiveReads.push(...local.filter((w) => w !== dest));
    if (has(parsed, '--remove-source-files')) writeAll(local.filter((w) => w !== dest), fx, true);
  },
  scp: (args, fx) => {
    const parsed = parseArgs(args, { short: 'cFiJlPSoDX', long: [] });
    if (has(parsed, '-S', '-o', '-F', '-J')) fx.runs.push('scp is given a program or configuration to run');
    const dest = parsed.operands[parsed.operands.length - 1];
    if (dest && (dest.text === null || !/^[^/]*:/.test(dest.text))) fx.writes.push({ word: dest, recursive: true, sources: parsed.operands.slice(0, -1), operand: true });
    fx.recursiveReads.push(...parsed.operands.slice(0, -1).filter((w) => w.text === null || !/^[^/]*:/.test(w.text)));
  },
  dd: (args, fx) => {
    for (const a of args) {
      if (a.text === null) fx.writes.push({ word: UNKNOWN });
      else if (a.text.startsWith('of=')) fx.writes.push({ word: slice(a, 3), operand: true });
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
  mknod: (args, fx) => writeAll(parseArgs(args, { short: 'mZ' }).operands.slice(0, 1), fx, false, true),
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
    if (parsed.operands[1]) fx.writes.push({ word: parsed.operands[1], operand: true });
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
    fx.writes.push({ word: values(parsed, '-d')[0] ?? word('.'), recursive: true, operand: true });
  },
  zip: (args, fx) => {
    const parsed = parseArgs(args, { short: 'bnPtxiTU', long: ['--unzip-command', '--temp-path', '--password', '--exclude', '--include'] });
    if (has(parsed, '-TT', '--unzip-command')) fx.runs.push('zip -TT runs a program');
    const args0 = args.find((w) => w.text === '-TT');
    if (args0) fx.runs.push('zip -TT runs a program');
    if (parsed.operands[0]) fx.writes.push({ word: parsed.operands[0], operand: true });
    if (has(parsed, '-r', '--recurse-paths', '-R')) fx.recursiveReads.push(...parsed.operands.slice(1));
  },
  '7z': (args, fx) => {
    const mode = args[0]?.text;
    if (mode === 'x' || mode === 'e') {
      const out = args.find((w) => w.text?.startsWith('-o'));
      fx.writes.push({ word: out ? slice(out, 2) : word('.'), recursive: true, operand: true });
    } else if (mode === 'a' || mode === 'u' || mode === 'd') fx.writes.push({ word: args.slice(1).find((w) => w.text === null || !w.text.startsWith('-')) ?? UNKNOWN });
  },
  cpio: (args, fx) => {
    const parsed = parseArgs(args, { short: 'DEFIOHMRs', long: ['--directory', '--file', '--format', '--rsh-command'] });
    if (has(parsed, '--rsh-command')) fx.runs.push('cpio --rsh-command runs a program');
    if (has(parsed, '-i', '--extract', '-p', '--pass-through')) fx.writes.push({ word: values(parsed, '-D', '--directory')[0] ?? parsed.operands[0] ?? word('.'), recursive: true, operand: true });
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
