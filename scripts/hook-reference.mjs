// The README's hook reference, generated from kernel/hooks.ts (each hook's JSDoc, tapable class and types).
// `node scripts/hook-reference.mjs --write` updates the README between its markers; a test keeps it current.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const START = '<!-- hook-reference:start (generated from kernel/hooks.ts by scripts/hook-reference.mjs) -->';
export const END = '<!-- hook-reference:end -->';

/** The markdown table for a hooks.ts source text. */
export function hookReference(source) {
  const rows = [];
  const cell = (text) => text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');
  const pattern = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*\n\s*(\w+): new (\w+)<([\s\S]*?)>\(\[/g;
  for (const [, doc, name, cls, generics] of source.matchAll(pattern)) {
    // `[A, B[]], R`: the tuple of arguments, then the bail result type.
    let depth = 0;
    let close = -1;
    for (let i = 0; i < generics.length && close === -1; i++) {
      if (generics[i] === '[') depth++;
      else if (generics[i] === ']' && --depth === 0) close = i;
    }
    const args = generics.slice(1, close);
    const bail = generics.slice(close + 1).replace(/^\s*,\s*/, '');
    const returns = cls.includes('Waterfall') ? args.split(',')[0] : cls.includes('Bail') ? bail : 'void';
    const text = doc.split('\n').map((l) => l.replace(/^\s*\*\s?/, '').trim()).join(' ');
    rows.push(`| \`${name}\` | ${cls} | \`${cell(args)}\` | \`${cell(returns)}\` | ${cell(text)} |`);
  }
  if (rows.length === 0) throw new Error('hook-reference: no hooks found in kernel/hooks.ts');
  return ['| hook | tapable class | taps receive | a tap returns | contract |', '|---|---|---|---|---|', ...rows].join('\n');
}

export function currentReadmeSection(readme) {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start === -1 || end === -1) throw new Error('hook-reference: the README has no hook-reference markers');
  return readme.slice(start + START.length, end).trim();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const table = hookReference(readFileSync(path.join(root, 'kernel', 'hooks.ts'), 'utf8'));
  if (!process.argv.includes('--write')) console.log(table);
  else {
    const file = path.join(root, 'README.md');
    const readme = readFileSync(file, 'utf8');
    const start = readme.indexOf(START);
    const end = readme.indexOf(END);
    writeFileSync(file, `${readme.slice(0, start + START.length)}\n${table}\n${readme.slice(end)}`);
  }
}
