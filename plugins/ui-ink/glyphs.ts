/** What the terminal can show: Unicode glyphs only under a UTF-8 locale, colours unless NO_COLOR is set. */
export interface Glyphs {
  bullet: string;
  result: string;
  spinner: string[];
  prompt: string;
  check: string;
  cross: string;
  pointer: string;
  ellipsis: string;
  dot: string;
  arrow: string;
  listBullet: string;
  quote: string;
  rule: string;
}

const UNICODE: Glyphs = {
  bullet: '●',
  result: '⎿',
  spinner: ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'],
  prompt: '›',
  check: '✓',
  cross: '✗',
  pointer: '❯',
  ellipsis: '…',
  dot: '·',
  arrow: '→',
  listBullet: '•',
  quote: '│',
  rule: '─',
};

const ASCII: Glyphs = {
  bullet: '*',
  result: '|',
  spinner: ['-', '\\', '|', '/'],
  prompt: '>',
  check: '+',
  cross: 'x',
  pointer: '>',
  ellipsis: '...',
  dot: '-',
  arrow: '->',
  listBullet: '-',
  quote: '|',
  rule: '-',
};

/** The locale's charset, as the C library would pick it: LC_ALL, then LC_CTYPE, then LANG. */
export function isUtf8Locale(env: NodeJS.ProcessEnv): boolean {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  return /utf-?8/i.test(locale);
}

export function glyphsFor(env: NodeJS.ProcessEnv): Glyphs {
  return isUtf8Locale(env) ? UNICODE : ASCII;
}

/** https://no-color.org: any non-empty NO_COLOR turns colours off. */
export function colorsWanted(env: NodeJS.ProcessEnv): boolean {
  return !env.NO_COLOR;
}
