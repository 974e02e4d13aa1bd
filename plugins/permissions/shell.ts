/**
 * Splits a shell command into the simple commands it would run, with mvdan/sh's bash parser (GopherJS build,
 * `mvdan-sh`). The parser is loaded on the first command that needs it: a command of plain words does not.
 */
import os from 'node:os';
import type { ShNode, ShParser } from 'mvdan-sh';
import { literalCommand } from './literal-command.js';
import { innerScript, invocations } from './programs.js';

/** One word of a command: its literal value, or null when the shell decides it at run time. */
export type ShellWord = string | null;

/** What is known about one word. */
export interface WordInfo {
  /** The literal value; null when anything in it expands at run time. */
  text: ShellWord;
  /**
   * The value with `$HOME`/`${HOME}` and a leading `~` replaced by the home folder (when known): what a path
   * word names. Null when other expansions remain.
   */
  path: ShellWord;
  /** An unquoted `*`, `?` or `[`: the shell expands it against the file system. */
  glob: boolean;
}

export interface Redirect {
  /** `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<<`, `<<<`, `<>`, `>&`, `<&`. */
  op: string;
  /** The literal target, or null when it is computed. */
  target: ShellWord;
  /** The target as a path (`$HOME` expanded), or null. */
  path: ShellWord;
}

export interface SimpleCommand {
  /** The command as written. */
  text: string;
  /** Literal words; `null` for a word with expansions, quotes resolved otherwise. */
  argv: ShellWord[];
  /** The same words with what else is known about each. */
  words: WordInfo[];
  /** The text fed to the command by a here-document or here-string, when literal (null when it expands). */
  stdin?: ShellWord;
  /** Names assigned before the command (`FOO=1 cmd`), or by a bare assignment. */
  assigns: string[];
  redirects: Redirect[];
  /**
   * Set for constructs a rule cannot vouch for (function definitions, `declare`/`export`, arithmetic and test
   * clauses, coprocesses, bare assignments): the reason, for messages.
   */
  opaque?: string;
}

export type ShellAnalysis = { ok: true; commands: SimpleCommand[] } | { ok: false; error: string };

export interface AnalyzeOptions {
  /** The home folder `$HOME` and `~` stand for in path words. */
  home?: string;
}

interface ShSyntax {
  NewParser(...options: unknown[]): ShParser;
  NodeType(node: ShNode): string;
  Walk(node: ShNode, visit: (node: ShNode | null) => boolean): void;
}

let loading: Promise<ShSyntax> | undefined;

function loadSyntax(): Promise<ShSyntax> {
  loading ??= import('mvdan-sh').then((mod) => {
    // The GopherJS module is CommonJS: its namespace arrives as the default export.
    const ns = (mod as unknown as { default?: { syntax: ShSyntax }; syntax?: ShSyntax });
    const syntax = ns.default?.syntax ?? ns.syntax;
    if (!syntax) throw new Error('mvdan-sh did not load: no syntax namespace');
    return syntax;
  });
  return loading;
}

/** Constructs that hold commands a rule must see but that no rule can allow as a whole. */
const OPAQUE: Record<string, string> = {
  FuncDecl: 'a function definition',
  DeclClause: 'a declare/export/local clause',
  ArithmCmd: 'an arithmetic command',
  LetClause: 'a let clause',
  TestClause: 'a [[ ]] test',
  CoprocClause: 'a coprocess',
};

/**
 * Parses `command` as bash. Never throws: a parse failure is `{ ok: false }`. A command of plain words only is
 * read without the parser (literal-command.ts); `parser: 'bash'` always uses the parser (for the parity test).
 */
export async function analyzeShell(command: string, options: AnalyzeOptions = {}, depth = 0, parser: 'auto' | 'bash' = 'auto'): Promise<ShellAnalysis> {
  const literal = parser === 'auto' ? literalCommand(command) : undefined;
  const parsed = literal ? { ok: true as const, commands: [literal] } : await parseBash(command, options);
  if (!parsed.ok) return parsed;
  const flat = parsed.commands;
  // `bash -c '…'`, `eval …`, `find -exec sh -c '…'`, `env -S '…'`, `watch '…'`, `trap '…'` and a shell fed a
  // literal here-document run a string as a script: its commands are judged too.
  for (const cmd of [...flat]) {
    for (const invocation of invocations(cmd.words)) {
      const script = innerScript(invocation.words.map((w) => w.text), cmd.stdin);
      if (script === undefined) continue;
      if (depth >= 3) return { ok: false, error: 'shell scripts nested too deeply' };
      const inner = await analyzeShell(script, options, depth + 1, parser);
      if (!inner.ok) return { ok: false, error: `in the script run by "${cmd.text}": ${inner.error}` };
      flat.push(...inner.commands);
    }
  }
  return { ok: true, commands: flat };
}

/** The simple commands of `command` as mvdan/sh's bash parser reads it (scripts run by them not yet included). */
async function parseBash(command: string, options: AnalyzeOptions): Promise<ShellAnalysis> {
  let syntax: ShSyntax;
  try {
    syntax = await loadSyntax();
  } catch (err) {
    return { ok: false, error: `the shell parser could not be loaded (${err instanceof Error ? err.message : String(err)})` };
  }
  if (command.includes('\0')) return { ok: false, error: 'the command contains a NUL byte' };
  const bytes = Buffer.from(command, 'utf8');
  // mvdan/sh reports byte offsets.
  const source = (node: ShNode): string => bytes.subarray(node.Pos().Offset(), node.End().Offset()).toString('utf8');
  let file: ShNode;
  try {
    file = syntax.NewParser().Parse(command, '');
  } catch (err) {
    const message = err instanceof Error ? err.message : typeof err === 'object' && err && 'Error' in err ? String((err as { Error(): string }).Error()) : String(err);
    return { ok: false, error: message };
  }
  const commands: Array<SimpleCommand & { start: number; end: number }> = [];
  const scoped: Array<{ start: number; end: number; redirects: Redirect[]; stdin: ShellWord | undefined }> = [];
  const word = (node: ShNode): WordInfo => wordInfo(syntax, node, options.home);
  syntax.Walk(file, (node) => {
    if (!node) return false;
    const type = syntax.NodeType(node);
    const start = node.Pos().Offset();
    const end = node.End().Offset();
    if (type === 'CallExpr') {
      const args = (node.Args as ShNode[] | null) ?? [];
      const assigns = ((node.Assigns as ShNode[] | null) ?? []).map((a) => String((a.Name as { Value?: string } | null)?.Value ?? '?'));
      const words = args.map(word);
      commands.push({
        start,
        end,
        text: source(node),
        argv: words.map((w) => w.text),
        words,
        assigns,
        redirects: [],
        ...(args.length === 0 ? { opaque: 'a bare variable assignment' } : {}),
      });
    } else if (type in OPAQUE) {
      commands.push({ start, end, text: source(node), argv: [], words: [], assigns: [], redirects: [], opaque: OPAQUE[type] });
    } else if (type === 'Stmt') {
      const redirs = (node.Redirs as ShNode[] | null) ?? [];
      const cmd = node.Cmd as ShNode | null;
      if (redirs.length > 0) {
        const redirects = redirs.map((r) => redirect(r, source, word));
        const stdin = redirs.map((r) => hereText(r, word)).find((t) => t !== undefined);
        if (cmd) scoped.push({ start: cmd.Pos().Offset(), end: cmd.End().Offset(), redirects, stdin });
        else commands.push({ start, end, text: source(node), argv: [], words: [], assigns: [], redirects, opaque: 'a redirection without a command' });
      }
    }
    return true;
  });
  // A statement's redirects apply to its command; on a compound command (`{ a; b; } > f`) to every command inside.
  for (const scope of scoped) {
    for (const cmd of commands) {
      if (cmd.start < scope.start || cmd.end > scope.end) continue;
      cmd.redirects.push(...scope.redirects);
      if (scope.stdin !== undefined && cmd.stdin === undefined) cmd.stdin = scope.stdin;
    }
  }
  return { ok: true, commands: commands.map(({ start: _s, end: _e, ...cmd }) => cmd) };
}

/** The literal text of a here-document or here-string redirect; null when it expands; undefined for others. */
function hereText(node: ShNode, word: (n: ShNode) => WordInfo): ShellWord | undefined {
  if (node.Hdoc) return word(node.Hdoc as ShNode).text;
  const op = Number(node.Op);
  // 63 is `<<<` in mvdan/sh's operator table.
  if (op === 63 && node.Word) return word(node.Word as ShNode).text;
  return undefined;
}

function redirect(node: ShNode, source: (n: ShNode) => string, word: (n: ShNode) => WordInfo): Redirect {
  const text = source(node);
  const op = /^(?:\d+|\{\w+\})?(&>>|&>|>>|>\||>&|<>|<<<|<<-|<<|<&|>|<)/.exec(text)?.[1] ?? text;
  const info = node.Word ? word(node.Word as ShNode) : undefined;
  // A glob in a redirect target is not expanded by a non-interactive bash, but the target is still unknown.
  return { op, target: info?.glob ? null : info?.text ?? null, path: info?.glob ? null : info?.path ?? null };
}

/**
 * The value of a word when it is fixed text (null when it expands: parameters, substitutions, braces), and its
 * value as a path, where `$HOME`, `${HOME}` and a leading unquoted `~` stand for `home`.
 */
function wordInfo(syntax: ShSyntax, wordNode: ShNode, home: string | undefined): WordInfo {
  const parts = (wordNode.Parts as ShNode[] | null) ?? [];
  let text: ShellWord = '';
  let asPath: ShellWord = '';
  let glob = false;
  const add = (value: string) => {
    if (text !== null) text += value;
    if (asPath !== null) asPath += value;
  };
  const homeParam = (node: ShNode) =>
    home !== undefined && syntax.NodeType(node) === 'ParamExp' && (node.Param as { Value?: string } | null)?.Value === 'HOME' &&
    !node.Exp && !node.Index && !node.Slice && !node.Repl && !node.Length && !node.Excl && !node.Names && !node.Width;
  parts.forEach((part, index) => {
    const type = syntax.NodeType(part);
    if (type === 'Lit') {
      let value = String(part.Value);
      // Unquoted braces may expand (`{rm,-rf,/}`, `{1..3}`).
      if (/\{[^}]*(,|\.\.)[^}]*\}/.test(value)) {
        text = asPath = null;
        return;
      }
      if (/(^|[^\\])[*?[]/.test(value)) glob = true;
      value = unescapeUnquoted(value);
      if (index === 0 && home !== undefined && (value === '~' || value.startsWith('~/'))) {
        if (text !== null) text += value;
        if (asPath !== null) asPath += home + value.slice(1);
        return;
      }
      // `~name/…`, `~+`, `~-`, `~2` expand too (to a user's home, $PWD, $OLDPWD, the folder stack): as a path, our
      // own name is our home folder and any other is known only at run time; the text stays as typed.
      const tilde = index === 0 ? /^~([^/]+)(\/.*)?$/s.exec(value) : null;
      if (tilde) {
        const me = currentUser();
        if (text !== null) text += value;
        asPath = me && tilde[1] === me.name && asPath !== null ? me.home + (tilde[2] ?? '') : null;
        return;
      }
      add(value);
    } else if (type === 'SglQuoted') {
      const value = String(part.Value);
      if (part.Dollar && value.includes('\\')) text = asPath = null;
      else add(value);
    } else if (type === 'DblQuoted') {
      if (part.Dollar) {
        text = asPath = null;
        return;
      }
      for (const inner of (part.Parts as ShNode[] | null) ?? []) {
        if (syntax.NodeType(inner) === 'Lit') add(String(inner.Value).replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c)));
        else if (homeParam(inner)) {
          text = null;
          if (asPath !== null) asPath += home;
        } else text = asPath = null;
      }
    } else if (homeParam(part)) {
      text = null;
      if (asPath !== null) asPath += home;
    } else {
      text = asPath = null;
    }
  });
  return { text, path: asPath, glob };
}

let user: { name: string; home: string } | null | undefined;
/** Who `~name` names when it is us: bash looks the name up in the user database, not in $HOME. */
function currentUser(): { name: string; home: string } | null {
  if (user === undefined) {
    try {
      const info = os.userInfo();
      user = { name: info.username, home: info.homedir };
    } catch {
      user = null;
    }
  }
  return user;
}

function unescapeUnquoted(value: string): string {
  return value.replace(/\\(\n|.)/g, (_m, c: string) => (c === '\n' ? '' : c));
}
