/** The effects of the text tools that take a program: `sed` scripts, `perl -e/-i`, `awk` programs. */
import { has, parseArgs, UNKNOWN, values } from './args.js';
import { word, writeAll, type Effects } from './effect-kit.js';
import type { WordInfo } from './shell.js';

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

export function sedEffects(args: WordInfo[], fx: Effects): void {
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

export function perlEffects(args: WordInfo[], fx: Effects): void {
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

export function awkEffects(args: WordInfo[], fx: Effects, name: string): void {
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
