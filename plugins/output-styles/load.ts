/**
 * Output style files (Claude Code's format): Markdown with optional YAML front matter (`name`, `description`,
 * `keep-coding-instructions`); the body is the style's instructions. Looked for in the project's
 * `.claude/output-styles/` (a trusted project only), `$KEEL_HOME/output-styles/` and `~/.claude/output-styles/`.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { FRONT_MATTER, type Services } from '../../kernel/index.js';
import { BUILT_IN_STYLES, type OutputStyle } from './builtin.js';

/** A style is a few paragraphs; a larger file would go whole into every request's system prompt. */
export const MAX_STYLE_BYTES = 256 * 1024;

export interface StyleDirs {
  projectRoot: string;
  keelHome: string;
  home: string;
  /** False: the project's folder is named in `untrusted` but never read. */
  trusted: boolean;
  /** Reads a style file: the `project-files` service (plugin `instructions`), which judges a project's file. */
  files: Pick<Services['project-files'], 'read'>;
}

export interface LoadedStyles {
  /** Every style by lower-case name, first found wins: the project's, then `$KEEL_HOME`'s, then `~/.claude`'s, then the built-ins. */
  styles: Map<string, OutputStyle>;
  /** One line per file that could not be used, naming it. */
  errors: string[];
  /** `name: file shadows other` lines. */
  shadowed: string[];
  /** The untrusted project's style folder, when it holds style files that were not loaded. */
  untrusted?: string;
}

export function styleDirs(dirs: StyleDirs): Array<{ dir: string; project: boolean }> {
  return [
    { dir: path.join(dirs.projectRoot, '.claude', 'output-styles'), project: true },
    ...(dirs.keelHome ? [{ dir: path.join(dirs.keelHome, 'output-styles'), project: false }] : []),
    { dir: path.join(dirs.home, '.claude', 'output-styles'), project: false },
  ];
}

function markdownFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.endsWith('.md'))
      .map((e) => path.join(dir, e.name))
      .sort();
  } catch {
    return [];
  }
}

type YamlParse = (text: string) => unknown;

async function yamlParse(): Promise<YamlParse> {
  const mod = await import('yaml');
  // yaml ships CommonJS for Node: bundled, its functions sit on the default export.
  return typeof mod.parse === 'function' ? mod.parse : mod.default.parse;
}

/** One style file, or a one-line error naming the file and what is wrong. */
export function parseStyle(file: string, text: string, parse: YamlParse): OutputStyle | string {
  const match = FRONT_MATTER.exec(text);
  const body = (match ? text.slice(match[0].length) : text).trim();
  let data: Record<string, unknown> = {};
  if (match && (match[1] ?? '').trim()) {
    let parsed: unknown;
    try {
      parsed = parse(match[1]!);
    } catch (err) {
      return `${file}: front matter is not valid YAML: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;
    }
    if (parsed !== null && parsed !== undefined) {
      if (typeof parsed !== 'object' || Array.isArray(parsed)) return `${file}: front matter must be a mapping (key: value)`;
      data = parsed as Record<string, unknown>;
    }
  }
  const fallback = path.basename(file, '.md');
  const name = data.name ?? fallback;
  if (typeof name !== 'string' || !/^[\w][\w .-]*$/.test(name.trim())) return `${file}: field "name" must be a word (letters, digits, - _ . and spaces)`;
  if (data.description !== undefined && typeof data.description !== 'string') return `${file}: field "description" must be text`;
  const keep = data['keep-coding-instructions'];
  if (keep !== undefined && typeof keep !== 'boolean' && keep !== 'true' && keep !== 'false') {
    return `${file}: field "keep-coding-instructions" must be true or false`;
  }
  if (!body) return `${file}: the style has no instructions (the text after the front matter is empty)`;
  return {
    name: name.trim(),
    description: (data.description as string | undefined)?.trim() || body.split('\n')[0]!.slice(0, 80),
    prompt: body,
    keepCodingInstructions: keep === true || keep === 'true',
    source: file,
  };
}

export async function loadStyles(dirs: StyleDirs): Promise<LoadedStyles> {
  const styles = new Map<string, OutputStyle>();
  const errors: string[] = [];
  const shadowed: string[] = [];
  let untrusted: string | undefined;
  let parse: YamlParse | undefined;
  for (const { dir, project } of styleDirs(dirs)) {
    const files = markdownFiles(dir);
    if (!files.length) continue;
    if (project && !dirs.trusted) {
      untrusted = dir;
      continue;
    }
    parse ??= await yamlParse();
    for (const file of files) {
      let text: string;
      try {
        text = await dirs.files.read(file, { maxBytes: MAX_STYLE_BYTES, ...(project ? { project: dirs.projectRoot } : {}) });
      } catch (err) {
        errors.push(`${file}: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      const style = parseStyle(file, text, parse);
      if (typeof style === 'string') {
        errors.push(style);
        continue;
      }
      const key = style.name.toLowerCase();
      const first = styles.get(key);
      if (first) shadowed.push(`${style.name}: ${file} is shadowed by ${first.source}`);
      else styles.set(key, style);
    }
  }
  for (const style of BUILT_IN_STYLES) {
    const first = styles.get(style.name);
    if (first) shadowed.push(`${style.name}: the built-in style is shadowed by ${first.source}`);
    else styles.set(style.name, style);
  }
  return { styles, errors, shadowed, ...(untrusted ? { untrusted } : {}) };
}
