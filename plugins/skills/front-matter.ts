/**
 * Markdown files with YAML front matter (SKILL.md, and custom commands through the `front-matter` service): read,
 * parsed (yaml loads only when a file has some) and checked with zod; every fault is one line naming the file.
 */
import { frontMatterOf, FRONT_MATTER, type Services, type z } from '../../kernel/index.js';

export type Parsed<T> = { ok: true; data: T; body: string } | { ok: false; error: string };

export interface FrontMatterOptions {
  /** A file without front matter is an error saying the block must hold this (SKILL.md: "name and description"); otherwise it parses as `{}`. */
  required?: string;
  /**
   * Keys whose value is taken as written on its line, not as YAML — Claude Code's
   * `argument-hint: [pr-number] [priority]` is text, though YAML would read it as a list or reject it.
   */
  verbatim?: string[];
  /**
   * The file is the project's (not the user's or a plugin's): the root of that project. It is then read only when
   * it resolves to no secret and, in an untrusted folder, inside this root (the `project-files` service).
   */
  project?: string;
}

/** One line naming the file and the field at fault. */
function issueLine(file: string, error: z.ZodError): string {
  const issue = error.issues[0]!;
  const field = issue.path.length ? `field "${issue.path.join('.')}"` : 'front matter';
  return `${file}: ${field}: ${issue.message}`;
}

/** Reads a file safely: the `project-files` service (plugin `instructions`). */
export type FileReader = Pick<Services['project-files'], 'read'>;

export async function readMarkdown<T>(file: string, schema: z.ZodType<T>, opts: FrontMatterOptions, files: FileReader): Promise<Parsed<T>> {
  let text: string;
  try {
    text = await files.read(file, opts.project === undefined ? {} : { project: opts.project });
  } catch (err) {
    return { ok: false, error: `${file}: ${err instanceof Error ? err.message : String(err)}` };
  }
  return parseMarkdown(file, text, schema, opts);
}

export async function parseMarkdown<T>(file: string, text: string, schema: z.ZodType<T>, opts: FrontMatterOptions = {}): Promise<Parsed<T>> {
  const block = frontMatterOf(text);
  if (block === undefined && opts.required) return { ok: false, error: `${file}: no front matter (a --- block with ${opts.required} at the top)` };
  const body = block === undefined ? text : text.replace(FRONT_MATTER, '');
  let yamlText = block;
  const taken: Record<string, string> = {};
  for (const key of yamlText === undefined ? [] : (opts.verbatim ?? [])) {
    const line = new RegExp(`^${key}:[ \\t]*(.*)$`, 'm');
    const match = line.exec(yamlText!);
    if (!match) continue;
    taken[key] = match[1]!.trim().replace(/^(["'])(.*)\1$/, '$2');
    yamlText = yamlText!.replace(line, '');
  }
  let raw: unknown = {};
  if (yamlText !== undefined) {
    const mod = await import('yaml');
    // yaml ships CommonJS for Node: bundled, its functions sit on the default export.
    const parse = typeof mod.parse === 'function' ? mod.parse : mod.default.parse;
    try {
      raw = parse(yamlText) ?? {};
    } catch (err) {
      const first = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      return { ok: false, error: `${file}: front matter is not valid YAML: ${first}` };
    }
    if (typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, error: `${file}: front matter must be a mapping of fields` };
  }
  const checked = schema.safeParse({ ...(raw as object), ...taken });
  if (!checked.success) return { ok: false, error: issueLine(file, checked.error) };
  return { ok: true, data: checked.data, body: body.replace(/^\s*\n/, '') };
}
