/** The effects of archivers and compressors: what `tar`, `unzip`, `zip`, `7z`, `cpio` and `gzip` and kin write or run. */
import { has, parseArgs, values } from './args.js';
import { word, writeAll, type Effects } from './effect-kit.js';
import type { WordInfo } from './shell.js';

export function tarEffects(args: WordInfo[], fx: Effects): void {
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
    fx.writes.push({ word: dir, recursive: true, operand: true });
  } else if (has(parsed, '-c', '--create', '-r', '--append', '-u', '--update', '-A', '--catenate', '--concatenate', '--delete')) {
    for (const a of archive) if (a.text !== '-') fx.writes.push({ word: a, operand: true });
    fx.recursiveReads.push(...parsed.operands.map((o) => (dir.text === '.' ? o : { ...o, path: o.path && dir.path && !o.path.startsWith('/') ? `${dir.path}/${o.path}` : o.path })));
  }
  if (has(parsed, '--index-file')) writeAll(values(parsed, '--index-file'), fx);
}

export function compressor(args: WordInfo[], fx: Effects): void {
  const parsed = parseArgs(args, { short: 'S', long: ['--suffix'] });
  if (has(parsed, '-c', '--stdout', '-l', '--list', '-t', '--test')) return;
  for (const w of parsed.operands) {
    fx.writes.push({ word: w, operand: true });
    if (w.text !== null && /\.[a-z0-9]+$/i.test(w.text)) fx.writes.push({ word: { ...w, text: w.text.replace(/\.[a-z0-9]+$/i, ''), path: w.path?.replace(/\.[a-z0-9]+$/i, '') ?? null }, operand: true });
  }
}
