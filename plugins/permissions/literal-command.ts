/**
 * The shell analysis of a command made only of plain words (`cat a.txt`, `npm test`, `git status -s`), without
 * loading the bash parser: its 1.3 MB GopherJS build costs about 50 ms of load and first-parse time (measured in an
 * edit session), which a one-line literal command does not need. Anything with shell syntax goes to the parser.
 *
 * A command qualifies when every character is one that bash gives no meaning to (letters, digits and `_ . / : @ % +
 * , -`), words are separated by spaces, and the first word is not a reserved word or a declaration builtin (which
 * bash parses as a clause, not a command). Then bash runs exactly one simple command whose words are the text
 * itself: no quoting, expansion, globbing, redirection, assignment or operator is possible. A parity test checks
 * the result against the parser's for every such command in a generated corpus.
 */
import type { SimpleCommand } from './shell.js';

const LITERAL = /^[A-Za-z0-9_./:@%+,-]+(?: +[A-Za-z0-9_./:@%+,-]+)*$/;

/** Words bash parses specially at the start of a command (reserved words, `time`, and declaration clauses). */
const CLAUSE_WORDS = new Set([
  'if', 'then', 'else', 'elif', 'fi', 'case', 'esac', 'for', 'select', 'while', 'until', 'do', 'done', 'in', 'function', 'time', 'coproc',
  'declare', 'typeset', 'export', 'local', 'readonly', 'nameref', 'let',
]);

/** The command's analysis when it is one literal simple command, else undefined (parse it). */
export function literalCommand(command: string): SimpleCommand | undefined {
  const text = command.replace(/^ +| +$/g, '');
  if (!LITERAL.test(text)) return undefined;
  const argv = text.split(/ +/);
  if (CLAUSE_WORDS.has(argv[0])) return undefined;
  return { text, argv, words: argv.map((word) => ({ text: word, path: word, glob: false })), assigns: [], redirects: [] };
}
