/**
 * A reader for git's config file format, enough to find the keys that name other files: `core.hooksPath` and
 * `include.path` / `includeIf.<condition>.path`. It only reads files; no git runs, so nothing the repository
 * configures (fsmonitor, hooks) can run while Keel looks.
 */

export interface GitConfigEntry {
  /** `section.subsection.key`, section and key lowercased (subsections keep their case, as in git). */
  key: string;
  /** The value with quotes, escapes and comments taken out; `true` for a bare key. */
  value: string;
}

/** The entries of a git config file's text, in order. Malformed lines are skipped: git would refuse the file. */
export function parseGitConfig(text: string): GitConfigEntry[] {
  const entries: GitConfigEntry[] = [];
  let section = '';
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].replace(/^\s+/, '');
    if (line.startsWith('[')) {
      const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
      if (!header) continue;
      const name = header[1].toLowerCase();
      // `[section "Sub"]` keeps Sub's case; the old `[section.sub]` form is lowercased whole.
      section = header[2] === undefined ? name : `${name}.${header[2].replace(/\\(.)/g, '$1')}`;
      line = line.slice(header[0].length).replace(/^\s+/, '');
    }
    const key = /^([A-Za-z][A-Za-z0-9-]*)\s*(=?)/.exec(line);
    if (!key || !section) continue;
    if (!key[2]) {
      // A bare key is boolean true, unless what follows is a comment or nothing.
      if (/^\s*([#;]|$)/.test(line.slice(key[0].length))) entries.push({ key: `${section}.${key[1].toLowerCase()}`, value: 'true' });
      continue;
    }
    let rest = line.slice(key[0].length);
    // A backslash at the end of a line continues the value on the next one.
    while (/(^|[^\\])(\\\\)*\\$/.test(rest) && i + 1 < lines.length) rest = rest.slice(0, -1) + lines[++i];
    entries.push({ key: `${section}.${key[1].toLowerCase()}`, value: unquote(rest) });
  }
  return entries;
}

/** A raw value: quotes toggle, `#`/`;` outside quotes start a comment, escapes resolved, outer blanks trimmed. */
function unquote(raw: string): string {
  let out = '';
  let quoted = false;
  // Blanks at the end are dropped unless quoted: keep where the last kept character ends.
  let keep = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '"') {
      quoted = !quoted;
      keep = out.length;
      continue;
    }
    if (!quoted && (c === '#' || c === ';')) break;
    if (c === '\\' && i + 1 < raw.length) {
      const next = raw[++i];
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'b' ? '\b' : next;
      keep = out.length;
      continue;
    }
    if (!quoted && (c === ' ' || c === '\t') && out.length === 0) continue;
    out += c;
    if (quoted || (c !== ' ' && c !== '\t')) keep = out.length;
  }
  return out.slice(0, keep);
}
