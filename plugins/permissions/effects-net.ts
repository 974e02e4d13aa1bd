/** The effects of `curl` and `wget`: the files they save, the files they upload, the configuration they read. */
import { has, parseArgs, slice, UNKNOWN, values } from './args.js';
import { word, type Effects } from './effect-kit.js';
import type { WordInfo } from './shell.js';

export function curlEffects(args: WordInfo[], fx: Effects): void {
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

export function wgetEffects(args: WordInfo[], fx: Effects): void {
  const parsed = parseArgs(args, { short: 'OoaPieDtTUwQlAR', long: ['--output-document', '--output-file', '--append-output', '--directory-prefix', '--input-file', '--execute', '--post-file', '--body-file', '--load-cookies', '--save-cookies', '--config', '--user-agent', '--header', '--tries', '--timeout', '--wait', '--level', '--accept', '--reject', '--use-askpass'] });
  const named = values(parsed, '-O', '--output-document');
  for (const w of [...named, ...values(parsed, '-o', '--output-file', '-a', '--append-output', '--save-cookies')]) if (w.text !== '-' && w.text !== '/dev/null') fx.writes.push({ word: w });
  const prefix = values(parsed, '-P', '--directory-prefix')[0];
  if (named.length === 0) {
    if (has(parsed, '-r', '--recursive', '-m', '--mirror', '-p', '--page-requisites', '-x', '--force-directories')) fx.writes.push({ word: prefix ?? word('.'), recursive: true });
    else for (const u of parsed.operands) fx.writes.push({ word: remoteName(u, prefix), operand: !prefix });
  }
  for (const w of values(parsed, '-i', '--input-file', '--post-file', '--body-file', '--load-cookies')) fx.reads.push(w);
  if (has(parsed, '-e', '--execute', '--config', '--use-askpass')) fx.runs.push('wget is given commands or a program to run');
}
