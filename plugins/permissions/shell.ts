/**
 * Splits a shell command into the simple commands it would run, with mvdan/sh's bash parser (GopherJS build,
 * `mvdan-sh`). The parser is loaded on the first bash call only: it costs about 150 ms to load.
 */
import type { ShNode, ShParser } from 'mvdan-sh';

/** One word of a command: its literal value, or null when the shell decides it at run time. */
export type ShellWord = string | null;

export interface Redirect {
  /** `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<<`, `<<<`, `<>`, `>&`, `<&`. */
  op: string;
  /** The literal target, or null when it is computed. */
  target: ShellWord;
}

export interface SimpleCommand {
  /** The command as written. */
  text: string;
  /** Literal words; `null` for a word with expansions, quotes resolved otherwise. */
  argv: ShellWord[];
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

/** Parses `command` as bash. Never throws: a parse failure is `{ ok: false }`. */
export async function analyzeShell(command: string, depth = 0): Promise<ShellAnalysis> {
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
  const scoped: Array<{ start: number; end: number; redirects: Redirect[] }> = [];
  const word = (node: ShNode): ShellWord => literalWord(syntax, node);
  syntax.Walk(file, (node) => {
    if (!node) return false;
    const type = syntax.NodeType(node);
    const start = node.Pos().Offset();
    const end = node.End().Offset();
    if (type === 'CallExpr') {
      const args = (node.Args as ShNode[] | null) ?? [];
      const assigns = ((node.Assigns as ShNode[] | null) ?? []).map((a) => String((a.Name as { Value?: string } | null)?.Value ?? '?'));
      commands.push({
        start,
        end,
        text: source(node),
        argv: args.map(word),
        assigns,
        redirects: [],
        ...(args.length === 0 ? { opaque: 'a bare variable assignment' } : {}),
      });
    } else if (type in OPAQUE) {
      commands.push({ start, end, text: source(node), argv: [], assigns: [], redirects: [], opaque: OPAQUE[type] });
    } else if (type === 'Stmt') {
      const redirs = (node.Redirs as ShNode[] | null) ?? [];
      const cmd = node.Cmd as ShNode | null;
      if (redirs.length > 0) {
        const redirects = redirs.map((r) => redirect(r, source, word));
        if (cmd) scoped.push({ start: cmd.Pos().Offset(), end: cmd.End().Offset(), redirects });
        else commands.push({ start, end, text: source(node), argv: [], assigns: [], redirects, opaque: 'a redirection without a command' });
      }
    }
    return true;
  });
  // A statement's redirects apply to its command; on a compound command (`{ a; b; } > f`) to every command inside.
  for (const scope of scoped) {
    for (const cmd of commands) if (cmd.start >= scope.start && cmd.end <= scope.end) cmd.redirects.push(...scope.redirects);
  }
  const flat: SimpleCommand[] = commands.map(({ start: _s, end: _e, ...cmd }) => cmd);
  // `bash -c '…'`, `sh -c '…'` and `eval …` run a string as a script: its commands are judged too.
  for (const cmd of [...flat]) {
    const script = innerScript(cmd.argv);
    if (script === undefined) continue;
    if (depth >= 3) return { ok: false, error: 'shell scripts nested too deeply' };
    const inner = await analyzeShell(script, depth + 1);
    if (!inner.ok) return { ok: false, error: `in the script run by "${cmd.text}": ${inner.error}` };
    flat.push(...inner.commands);
  }
  return { ok: true, commands: flat };
}

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox']);

/** The script a command runs as a string (`bash -c S`, `eval S…`), when it is literal. */
function innerScript(argv: ShellWord[]): string | undefined {
  const real = unwrapCommand(argv);
  const head = real[0];
  if (!head) return undefined;
  const name = head.split('/').pop() ?? head;
  if (name === 'eval' && real.slice(1).every((w) => w !== null)) return real.slice(1).join(' ');
  if (SHELLS.has(name)) {
    const flag = real.findIndex((w, i) => i > 0 && w !== null && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(w));
    const script = flag > 0 ? real[flag + 1] : undefined;
    if (typeof script === 'string') return script;
  }
  return undefined;
}

function redirect(node: ShNode, source: (n: ShNode) => string, word: (n: ShNode) => ShellWord): Redirect {
  const text = source(node);
  const op = /^(?:\d+|\{\w+\})?(&>>|&>|>>|>\||>&|<>|<<<|<<-|<<|<&|>|<)/.exec(text)?.[1] ?? text;
  const target = node.Word ? word(node.Word as ShNode) : null;
  return { op, target };
}

/** The value of a word when it is fixed text; null when it expands (parameters, substitutions, braces). */
function literalWord(syntax: ShSyntax, wordNode: ShNode): ShellWord {
  const parts = (wordNode.Parts as ShNode[] | null) ?? [];
  let out = '';
  for (const part of parts) {
    const type = syntax.NodeType(part);
    if (type === 'Lit') {
      const value = String(part.Value);
      // Unquoted braces may expand (`{rm,-rf,/}`, `{1..3}`).
      if (/\{[^}]*(,|\.\.)[^}]*\}/.test(value)) return null;
      out += unescapeUnquoted(value);
    } else if (type === 'SglQuoted') {
      if (part.Dollar) {
        const ansi = String(part.Value);
        if (ansi.includes('\\')) return null;
        out += ansi;
      } else out += String(part.Value);
    } else if (type === 'DblQuoted') {
      if (part.Dollar) return null;
      for (const inner of (part.Parts as ShNode[] | null) ?? []) {
        if (syntax.NodeType(inner) !== 'Lit') return null;
        out += String(inner.Value).replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
      }
    } else {
      return null;
    }
  }
  return out;
}

function unescapeUnquoted(value: string): string {
  return value.replace(/\\(\n|.)/g, (_m, c: string) => (c === '\n' ? '' : c));
}

/** Wrappers that run their arguments as a command. */
const WRAPPERS = new Set(['sudo', 'doas', 'command', 'builtin', 'exec', 'nohup', 'nice', 'time', 'env', 'xargs', 'busybox', 'stdbuf', 'ionice', 'chroot', 'setsid']);

/** The command after wrappers such as `sudo`, `env FOO=1`, `timeout 5`. */
export function unwrapCommand(argv: Array<string | null>): Array<string | null> {
  let rest = argv;
  for (let guard = 0; guard < 8 && rest.length > 0; guard++) {
    const head = rest[0];
    if (head === null) return rest;
    const name = head.split('/').pop() ?? head;
    if (name === 'timeout') {
      rest = rest.slice(1);
      while (rest.length > 0 && rest[0] !== null && rest[0].startsWith('-')) rest = rest.slice(1);
      rest = rest.slice(1);
      continue;
    }
    if (!WRAPPERS.has(name)) return rest;
    rest = rest.slice(1);
    // Options, option values such as `nice -n 5`, and `env`'s assignments.
    while (rest.length > 0 && rest[0] !== null && (rest[0].startsWith('-') || /^\d+$/.test(rest[0]) || (name === 'env' && rest[0].includes('=')))) rest = rest.slice(1);
  }
  return rest;
}

