/**
 * The decision for one bash call. The command is parsed; its working folder is tracked through `cd`, `pushd`,
 * `git -C`, `env -C` and the call's `workdir`; every program it runs (through wrappers and `find -exec`) is
 * looked up in the effects table; the paths it writes, reads and runs in are resolved where the shell will touch
 * them and judged like file paths. Order: shell guard → bash deny rules → file deny rules on the paths →
 * protected paths and unknown write targets → ask rules → working folders and writes outside the project
 * (not in auto mode) → allow rules (only for commands with no effect beyond their text) → session → mode.
 */
import { lstatSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Decision, ToolCall } from '../../kernel/index.js';
import { effectsOf, type Effects, type WriteTarget } from './effects.js';
import { catastrophic } from './guard.js';
import { expandHome, isInside, isSavedOutput, protectedReason, resolveReal } from './paths.js';
import type { PolicyContext } from './policy.js';
import { withoutGlobalOptions } from './global-options.js';
import { innerScript, invocations, programName, type Invocation } from './programs.js';
import { isBare, pathPatternMatches, pathPatternReachesInto, shellPatternMatches, toolMatches, type Rule } from './rules.js';
import { analyzeShell, type ShellAnalysis, type SimpleCommand, type WordInfo } from './shell.js';

const deny = (reason: string): Decision => ({ behavior: 'deny', reason: `Permission denied: ${reason}` });
const ask = (reason: string): Decision => ({ behavior: 'ask', reason });
const allow = (reason?: string): Decision => (reason ? { behavior: 'allow', reason } : { behavior: 'allow' });

/** Programs whose arguments are text, never paths they open. */
const NO_PATH_ARGS = new Set(['echo', 'printf', 'true', 'false', ':', 'cd', 'pushd', 'popd', 'export', 'alias', 'type', 'which', 'command', 'exit', 'return', 'sleep', 'seq', 'yes', 'date', 'trap']);
const HARMLESS_TARGET = /^(\/dev\/null|\/dev\/stdout|\/dev\/stderr|\/dev\/tty|-|\d+)$/;
const READ_TOOLS = ['read_file', 'grep', 'glob', 'ls'];
const WRITE_TOOLS = ['write_file', 'edit_file'];
const MAX_GLOB_MATCHES = 2000;

export interface ShellVerdict {
  decision: Decision;
  /** The resolved `workdir`, re-checked right before the command runs. */
  resolved: string[];
}

/** One program the command runs, with where it runs and what it does. */
interface Step {
  cmd: SimpleCommand;
  inv: Invocation;
  fx: Effects;
  /** Folders relative paths may resolve against; `unknown` when one of them is computed at run time. */
  cwds: string[];
  cwdUnknown: boolean;
}

/** What the judge found, by severity. */
interface Findings {
  deny?: string;
  ask?: string;
  /** In every mode but auto: a working folder or a write outside the project. */
  outside?: string;
  /** Why an allow rule cannot vouch for the command (its effects go beyond its text). */
  beyondText?: string;
}

export async function evaluateShell(call: ToolCall, rules: Rule[], ctx: PolicyContext, MATRIX_EXECUTE: 'allow' | 'ask'): Promise<ShellVerdict> {
  const input = call.input as { command?: unknown; workdir?: unknown };
  const command = typeof input?.command === 'string' ? input.command : '';
  const workdir = typeof input?.workdir === 'string' && input.workdir ? input.workdir : undefined;
  const shellCwd = resolveReal(path.resolve(ctx.root, ctx.cwd));
  const start = workdir ? resolveReal(path.resolve(shellCwd, expandHome(workdir, ctx.home))) : shellCwd;
  const resolved = workdir ? [start] : [];
  const done = (decision: Decision): ShellVerdict => ({ decision, resolved });

  const analysis = await analyzeShell(command, { home: ctx.home });
  const blocked = catastrophic(command, analysis, { home: ctx.home, cwd: start });
  if (blocked) return done(deny(`this command ${blocked}; the shell guard always blocks it`));

  const bashDenies = rules.filter((r) => r.kind === 'deny' && r.specifier !== undefined);
  if (!analysis.ok) {
    const raw = command.trim();
    const denied = bashDenies.find((r) => shellPatternMatches(r.specifier!, raw));
    if (denied) return done(deny(`the command is denied by the rule "${denied.text}"`));
    return done(ask(`the command could not be parsed (${analysis.error}), so it needs the user's approval`));
  }

  const steps = plan(analysis, start, ctx);
  for (const step of steps) {
    const denied = bashDenies.find((r) => forms(step.inv).some((text) => shellPatternMatches(r.specifier!, text)));
    if (denied) return done(deny(`"${step.cmd.text}" is denied by the rule "${denied.text}"${step.inv.via ? ` (it runs ${forms(step.inv)[1]} through ${step.inv.via})` : ''}`));
  }
  if (bashDenies.length > 0) {
    const hidden = steps.find((s) => s.cmd.opaque === undefined && s.inv.words.length > 0 && s.inv.words[0].text === null);
    if (hidden) return done(ask(`"${hidden.cmd.text}" runs a command known only at run time, so the deny rules cannot vouch for it`));
    // With `shopt -s expand_aliases`, a name defined here runs whatever its alias says.
    const alias = steps.find((s) => programName(s.inv.words[0]?.text) === 'alias' && s.inv.words.slice(1).some((w) => w.text === null || w.text.includes('=')));
    if (alias) return done(ask(`"${alias.cmd.text}" defines an alias, so the deny rules cannot vouch for what its name runs`));
    const opaque = steps.map((s) => ({ step: s, why: hiddenCode(s) })).find((h) => h.why !== undefined);
    if (opaque) return done(ask(`"${opaque.step.cmd.text}" ${opaque.why}, so the deny rules cannot vouch for the programs it runs`));
  }

  const findings = judge(steps, analysis, start, ctx);
  if (findings.deny) return done(deny(findings.deny));
  if (findings.ask) return done(ask(findings.ask));

  const askRule = rules.find((r) => r.kind === 'ask' && (isBare(r) || steps.some((s) => forms(s.inv).some((text) => shellPatternMatches(r.specifier!, text)))));
  if (askRule) return done(ask(`the command matches the ask rule "${askRule.text}"`));

  if (ctx.mode !== 'auto' && findings.outside) return done(ask(findings.outside));

  const bareAllow = rules.find((r) => r.kind === 'allow' && isBare(r));
  if (bareAllow) return done(allow(`rule "${bareAllow.text}"`));
  const allowRules = rules.filter((r) => r.kind === 'allow' && r.specifier !== undefined);
  const uncovered = analysis.commands.find((cmd) => !covered(cmd, allowRules, steps, ctx));
  if (allowRules.length > 0 && analysis.commands.length > 0 && !uncovered && !findings.beyondText) return done(allow('every command is allowed by a rule'));
  if (ctx.sessionAllowed) return done(allow('allowed for this session'));
  if (MATRIX_EXECUTE === 'allow') return done(allow());
  if (allowRules.length > 0 && findings.beyondText && !uncovered) return done(ask(`an allow rule matches the command's text, but ${findings.beyondText}, which needs its own approval (mode ${ctx.mode})`));
  return done(ask(uncovered && analysis.commands.length > 1 ? `"${uncovered.text}" is not allowed by a rule (mode ${ctx.mode})` : `bash is an execute tool and the permission mode is ${ctx.mode}`));
}

/** Inside the project root or a folder added with `--add-dir` (`additionalDirectories`, `/add-dir`). */
function inProject(p: string, ctx: PolicyContext): boolean {
  return isInside(p, ctx.root) || (ctx.extraRoots ?? []).some((root) => isInside(p, root));
}

/** Programs that are shells: given no literal script (`bash -c '…'` and literal here-documents are parsed), they run code no one can read. */
const SHELL_NAMES = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'source', '.']);

/** `find -exec` and `xargs` run programs their text names; those are judged as invocations of their own. */
const NAMED_RUNS = /^(find -(exec|execdir|ok|okdir) runs a program on every match|xargs runs a program with arguments from its input)$/;

/**
 * Why a step runs code its text does not show — a shell or interpreter reading code from a pipe, a process
 * substitution or a computed word, inline code of another language, configuration that runs programs
 * (`git -c core.pager=…`) — or undefined. A script file run by name (`./build.sh`, `bash build.sh`) is not
 * looked into.
 */
function hiddenCode(step: Step): string | undefined {
  const setting = codeVariable(step.cmd);
  if (setting) return `sets ${setting}, which makes programs run other code`;
  const words = step.inv.words;
  const name = programName(words[0]?.text);
  if (name === undefined) return undefined;
  // A literal script (`bash -c '…'`, a literal here-document) was parsed and its commands judged already.
  if (SHELL_NAMES.has(name) && innerScript(words.map((w) => w.text), step.cmd.stdin) === undefined) {
    const operands = words.slice(1).filter((w) => w.text === null || !w.text.startsWith('-'));
    if (words.slice(1).some((w) => w.text === null)) return 'gives a shell a script known only at run time';
    if ((operands.length === 0 || words.some((w) => w.text === '-s')) && name !== 'source' && name !== '.') return 'feeds a shell its commands on stdin';
  }
  if (step.fx.stdinCode) return `feeds ${name} its code on stdin`;
  const runs = step.fx.runs.filter((why) => !NAMED_RUNS.test(why));
  if (runs.length > 0) return `runs code its text does not show (${runs[0]})`;
  return undefined;
}

/** Environment variables whose value is code, a program or a library that programs then run or load. */
const CODE_VARIABLE = /^(LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|DYLD_\w+|BASH_ENV|ENV|PROMPT_COMMAND|BASH_FUNC_\w+|PATH|SHELLOPTS|PS4|GIT_SSH|GIT_SSH_COMMAND|GIT_PAGER|PAGER|MANPAGER|GIT_EDITOR|EDITOR|VISUAL|SEQUENCE_EDITOR|GIT_SEQUENCE_EDITOR|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|GIT_EXEC_PATH|GIT_DIR|GIT_CONFIG\w*|GIT_PROXY_COMMAND|NODE_OPTIONS|NODE_PATH|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|npm_config_\w+|NPM_CONFIG_\w+|LESSOPEN|LESSCLOSE)$/;

/** A code-carrying variable the command assigns (`PAGER=… git log`, `env GIT_SSH_COMMAND=… git fetch`, `export NODE_OPTIONS=…`). */
function codeVariable(cmd: SimpleCommand): string | undefined {
  const names = [...cmd.assigns];
  for (const w of cmd.words) {
    const m = w.text === null ? null : /^([A-Za-z_]\w*)=/.exec(w.text);
    if (m) names.push(m[1]);
  }
  if (cmd.opaque !== undefined) for (const m of cmd.text.matchAll(/(?:^|[\s;])([A-Za-z_]\w*)\+?=/g)) names.push(m[1]);
  return names.find((n) => CODE_VARIABLE.test(n));
}

/**
 * The texts a deny or ask rule is matched against: as written, with the program's bare name (`/bin/rm` → `rm`), and
 * without the options that precede a subcommand (`git -C . push` → `git push`).
 */
function forms(inv: Invocation): string[] {
  const texts = inv.words.map((w) => w.text ?? '…');
  const bare = [programName(inv.words[0]?.text) ?? '…', ...texts.slice(1)];
  const global = withoutGlobalOptions([programName(inv.words[0]?.text) ?? null, ...inv.words.slice(1).map((w) => w.text)]);
  return [texts.join(' '), bare.join(' '), ...global.map((form) => form.map((w) => w ?? '…').join(' '))];
}

/** Walks the commands in order, following the working folder through `cd`, `pushd` and `workdir`. */
function plan(analysis: Extract<ShellAnalysis, { ok: true }>, start: string, ctx: PolicyContext): Step[] {
  const steps: Step[] = [];
  // Subshells (`(cd x)`) and pipelines do not carry a cd over; keeping every folder seen so far is the safe side.
  let cwds = [start];
  let cwdUnknown = false;
  for (const cmd of analysis.commands) {
    for (const inv of invocations(cmd.words)) {
      const fx = effectsOf(inv);
      let local = cwds;
      let localUnknown = cwdUnknown || Boolean(inv.cwdUnknown);
      const workIn = fx.workIn[fx.workIn.length - 1];
      if (workIn) {
        if (workIn.path === null) localUnknown = true;
        else local = cwds.map((c) => resolveIn(workIn.path!, c, ctx));
      }
      steps.push({ cmd, inv, fx, cwds: local, cwdUnknown: localUnknown });
      if (inv.via === '' && fx.cd !== undefined) {
        if (fx.cd === 'unknown' || (fx.cd !== 'home' && fx.cd.path === null)) cwdUnknown = true;
        else {
          const target = fx.cd === 'home' ? ctx.home : fx.cd.path!;
          cwds = unique([...cwds, ...cwds.map((c) => resolveIn(target, c, ctx))]);
        }
      }
    }
  }
  return steps;
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

function resolveIn(p: string, cwd: string, ctx: { home: string }): string {
  return resolveReal(path.resolve(cwd, expandHome(p, ctx.home)));
}

/** Every place a path word names, resolved against each possible working folder; globs expanded. */
function places(p: string, glob: boolean, step: { cwds: string[] }, ctx: PolicyContext): string[] {
  const out: string[] = [];
  for (const cwd of step.cwds) {
    const abs = path.resolve(cwd, expandHome(p, ctx.home));
    if (glob && /[*?[]/.test(p)) out.push(...expandGlob(abs), resolveReal(abs.split(/[*?[]/)[0].replace(/[^/]*$/, '') || '/'));
    else out.push(resolveReal(abs));
  }
  return unique(out);
}

/** The files a glob matches now (bash's rules: `*` skips dot files unless the pattern starts with a dot). */
function expandGlob(pattern: string): string[] {
  const segments = pattern.split('/');
  let current = ['/'];
  for (const segment of segments.slice(1)) {
    if (!segment) continue;
    const next: string[] = [];
    if (!/[*?[]/.test(segment)) {
      for (const dir of current) next.push(path.join(dir, segment));
    } else {
      const regex = globSegment(segment);
      for (const dir of current) {
        let names: string[] = [];
        try {
          names = readdirSync(dir);
        } catch {
          continue;
        }
        for (const name of names) if (regex.test(name) && (segment.startsWith('.') || !name.startsWith('.'))) next.push(path.join(dir, name));
      }
    }
    current = next.slice(0, MAX_GLOB_MATCHES);
  }
  return current.map((p) => resolveReal(p));
}

function globSegment(segment: string): RegExp {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i];
    if (c === '*') out += '.*';
    else if (c === '?') out += '.';
    else if (c === '[') {
      const end = segment.indexOf(']', i + 2);
      if (end === -1) out += '\\[';
      else {
        out += `[${segment.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`, 's');
}

/** The path words of a program that open files (options' `=values`, `@file`, `file://`, `if=`), for reads. */
function pathWords(step: Step): WordInfo[] {
  const name = programName(step.inv.words[0]?.text);
  const out: WordInfo[] = [...step.fx.reads];
  if (name !== undefined && !NO_PATH_ARGS.has(name)) {
    for (const w of step.inv.words.slice(1)) {
      if (w.text === null || w.path === null) {
        out.push(w);
        continue;
      }
      const text = w.path;
      if (text.startsWith('-')) {
        const eq = text.indexOf('=');
        if (eq !== -1) out.push({ text: text.slice(eq + 1), path: text.slice(eq + 1), glob: w.glob });
        else if (/^-[a-zA-Z][./~]/.test(text)) out.push({ text: text.slice(2), path: text.slice(2), glob: w.glob });
        continue;
      }
      out.push(w);
      const value = /^[A-Za-z_][A-Za-z0-9_]*=(.+)$/.exec(text)?.[1] ?? /^@(.+)$/.exec(text)?.[1] ?? /^file:\/\/(.+)$/.exec(text)?.[1];
      if (value) out.push({ text: value, path: value, glob: w.glob });
    }
  }
  for (const r of step.inv.via === '' ? step.cmd.redirects : []) {
    if (r.op === '<' || r.op === '<>') out.push({ text: r.target, path: r.path, glob: false });
  }
  return out;
}

/** The writes of a step: its effects, and its redirections into files. */
function writeTargets(step: Step): WriteTarget[] {
  const out = [...step.fx.writes];
  if (step.inv.via === '') {
    for (const r of step.cmd.redirects) {
      if (!(r.op.includes('>') || r.op === '<>')) continue;
      if (r.target !== null && HARMLESS_TARGET.test(r.target)) continue;
      out.push({ word: { text: r.target, path: r.path, glob: false } });
    }
  }
  return out;
}

/** Tokens of inline code that look like paths or file names (`'.git/hooks/x'`, `~/.bashrc`, `agent.config.ts`). */
function codePaths(code: string): string[] {
  return unique(code.split(/[\s'"`(),;+[\]{}<>|&=:]+/).filter((t) => t.length > 1 && /[/.~]/.test(t) && !/^\.+$/.test(t)));
}

function judge(steps: Step[], analysis: Extract<ShellAnalysis, { ok: true }>, start: string, ctx: PolicyContext): Findings {
  const found: Findings = {};
  const readDenies = ctx.rules.filter((r) => r.kind === 'deny' && r.specifier !== undefined && READ_TOOLS.some((t) => toolMatches(r, t)));
  const writeDenies = ctx.rules.filter((r) => r.kind === 'deny' && r.specifier !== undefined && WRITE_TOOLS.some((t) => toolMatches(r, t)));
  const note = (key: 'ask' | 'outside' | 'beyondText', why: string) => {
    found[key] ??= why;
  };
  const readEntries = (ctx.protected?.list() ?? []).filter((e) => e.read && e.path);
  const outsideRoot = (p: string) => !inProject(p, ctx);

  if (outsideRoot(start)) {
    note('outside', `the command runs in ${start}, outside the project ${ctx.root}`);
    note('beyondText', `it runs in ${start}, outside the project`);
  }
  const anyStdinCode = steps.some((s) => s.fx.stdinCode);

  for (const step of steps) {
    const text = step.cmd.text;
    const { fx } = step;
    for (const why of fx.runs) note('beyondText', why);

    // Working folders: cd/pushd targets and git -C / make -C / env -C.
    const folders = [...fx.workIn, ...(fx.cd && fx.cd !== 'unknown' && fx.cd !== 'home' ? [fx.cd] : [])];
    if (fx.cd === 'unknown') note('beyondText', `"${text}" changes to a folder known only at run time`);
    if (fx.cd === 'home' && outsideRoot(ctx.home)) {
      note('outside', `"${text}" changes to ${ctx.home}, outside the project ${ctx.root}`);
      note('beyondText', `"${text}" leaves the project`);
    }
    for (const folder of folders) {
      if (folder.path === null) {
        note('outside', `"${text}" works in a folder known only at run time`);
        note('beyondText', `"${text}" works in a folder known only at run time`);
        continue;
      }
      for (const place of places(folder.path, false, step, ctx)) {
        if (outsideRoot(place)) {
          note('outside', `"${text}" works in ${place}, outside the project ${ctx.root}`);
          note('beyondText', `"${text}" works in ${place}, outside the project`);
        }
      }
    }

    // Reads: every path word, and whole folders for recursive readers.
    for (const w of pathWords(step)) {
      if (w.path === null) {
        if (readDenies.length > 0) return { ...found, ask: `"${text}" names a path known only at run time, so the deny rules on file paths cannot vouch for it` };
        // Fixed text that bash still expands (`~bob/x`): an allow rule matching the text cannot vouch for where it leads.
        if (w.text !== null) note('beyondText', `"${text}" names ${w.text}, a path known only at run time`);
        continue;
      }
      for (const place of places(w.path, w.glob, step, ctx)) {
        const denied = readDenies.find((r) => pathPatternMatches(r.specifier!, place, ctx));
        if (denied) return { ...found, deny: `"${text}" reads ${place}, which the rule "${denied.text}" denies` };
        const why = protectedReason(place, 'read', ctx);
        if (why) note('ask', `"${text}" reads a protected path: ${why}`);
        if (outsideRoot(place) && !isSavedOutput(place, ctx)) note('beyondText', `"${text}" reads ${place}, outside the project`);
      }
    }
    for (const dir of fx.recursiveReads) {
      if (dir.path === null) {
        if (readDenies.length > 0) return { ...found, ask: `"${text}" reads a folder known only at run time, so the deny rules on file paths cannot vouch for it` };
        note('beyondText', `"${text}" reads a folder known only at run time`);
        continue;
      }
      for (const place of places(dir.path, dir.glob, step, ctx)) {
        const denied = readDenies.find((r) => pathPatternReachesInto(r.specifier!, place, ctx));
        if (denied) return { ...found, deny: `"${text}" reads everything in ${place}, which includes what the rule "${denied.text}" denies; name the files or folders to search instead` };
        const secret = readEntries.find((e) => isInside(e.path!, place));
        if (secret) note('ask', `"${text}" reads everything in ${place}, which includes ${secret.path} (${secret.why})`);
        if (outsideRoot(place)) note('beyondText', `"${text}" reads everything in ${place}, outside the project`);
      }
    }

    // Writes.
    for (const target of writeTargets(step)) {
      if (!target.operand) note('beyondText', `"${text}" writes files through its flags, script or redirections`);
      const places = writePlaces(target, step, ctx);
      if (places === undefined) {
        note('ask', `"${text}" writes to a path known only at run time, so Keel cannot tell whether it is protected`);
        continue;
      }
      for (const { place, recursive } of places) {
        const denied = writeDenies.find((r) => (recursive ? pathPatternReachesInto(r.specifier!, place, ctx) : pathPatternMatches(r.specifier!, place, ctx)));
        if (denied) return { ...found, deny: `"${text}" writes ${place}, which the rule "${denied.text}" denies` };
        const why = protectedReason(place, 'write', ctx) ?? (recursive ? containsProtected(place, ctx) : undefined);
        if (why) note('ask', `"${text}" writes to a protected path: ${why}`);
        if (outsideRoot(place)) note('outside', `"${text}" writes ${place}, outside the project ${ctx.root}`);
      }
    }

    // Inline code, and everything a code-reading interpreter may be fed.
    const code = [...fx.code];
    if (anyStdinCode) {
      code.push(...step.inv.words.map((w) => w.text ?? ''));
      if (typeof step.cmd.stdin === 'string') code.push(step.cmd.stdin);
    }
    for (const snippet of code) {
      for (const token of codePaths(snippet)) {
        // `os.environ['HOME'] + '/.bashrc'` leaves `/.bashrc`: tokens are tried under the home folder too.
        const underHome = token.startsWith('.') ? [resolveIn(token, ctx.home, ctx)] : token.startsWith('/') ? [resolveIn(`.${token}`, ctx.home, ctx)] : [];
        const candidates = unique([...places(token, false, step, ctx), ...underHome]);
        for (const place of candidates) {
          const denied = [...readDenies, ...writeDenies].find((r) => pathPatternMatches(r.specifier!, place, ctx));
          if (denied) return { ...found, deny: `the code run by "${text}" names ${place}, which the rule "${denied.text}" denies` };
          const why = protectedReason(place, 'write', ctx) ?? protectedReason(place, 'read', ctx);
          if (why) note('ask', `the code run by "${text}" names a protected path: ${why}`);
        }
      }
    }
  }
  void analysis;
  return found;
}

/** Where a write lands: `dest`, or `dest/<source name>` when `dest` is a folder. Undefined when unknown. */
function writePlaces(target: WriteTarget, step: Step, ctx: PolicyContext): Array<{ place: string; recursive: boolean }> | undefined {
  const dest = target.word.path;
  if (dest === null) return undefined;
  if (step.cwdUnknown && !path.isAbsolute(expandHome(dest, ctx.home))) return undefined;
  const out: Array<{ place: string; recursive: boolean }> = [];
  for (const place of places(dest, target.word.glob, step, ctx)) {
    const folder = target.intoFolder || isDirectory(place);
    if (target.sources && target.sources.length > 0 && folder) {
      for (const source of target.sources) {
        if (source.path === null) return undefined;
        out.push({ place: resolveReal(path.join(place, path.basename(source.path))), recursive: Boolean(target.recursive) });
      }
    } else out.push({ place, recursive: Boolean(target.recursive) });
  }
  return out;
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Why writing everything below `dir` touches the settings surface: a protected path inside it, two levels deep. */
function containsProtected(dir: string, ctx: PolicyContext): string | undefined {
  for (const entry of ctx.protected?.list() ?? []) {
    if (entry.path && isInside(entry.path, dir)) return `${dir} holds ${entry.path} (${entry.why})`;
  }
  const visit = (folder: string, depth: number): string | undefined => {
    let names: string[] = [];
    try {
      if (!lstatSync(folder).isDirectory()) return undefined;
      names = readdirSync(folder);
    } catch {
      return undefined;
    }
    for (const name of names.slice(0, 500)) {
      const why = protectedReason(path.join(folder, name), 'write', ctx);
      if (why) return `${dir} holds ${why}`;
    }
    if (depth > 0) for (const name of names.slice(0, 200)) {
      const why = visit(path.join(folder, name), depth - 1);
      if (why) return why;
    }
    return undefined;
  };
  return visit(dir, 1);
}

/** A simple command an allow rule vouches for: fixed words, no assignments, no redirections into files. */
function covered(cmd: SimpleCommand, allowRules: Rule[], steps: Step[], ctx: PolicyContext): boolean {
  if (cmd.opaque !== undefined || cmd.assigns.length > 0) return false;
  if (cmd.argv.length === 0 || cmd.argv.some((w) => w === null)) return false;
  const words = cmd.argv as string[];
  // `cd` into the project needs no rule: it changes nothing.
  if ((words[0] === 'cd' || words[0] === 'pushd') && words.length === 2 && !words[1].startsWith('-')) {
    const step = steps.find((s) => s.cmd === cmd);
    const targets = step ? places(step.fx.cd !== undefined && typeof step.fx.cd === 'object' && step.fx.cd.path !== null ? step.fx.cd.path : words[1], false, step, ctx) : [];
    if (targets.length > 0 && targets.every((t) => inProject(t, ctx))) return true;
  }
  const text = words.join(' ');
  return allowRules.some((r) => shellPatternMatches(r.specifier!, text));
}
