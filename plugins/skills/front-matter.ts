/** A Markdown file's YAML front matter, parsed (yaml loads only when a file has some) and checked with zod. */
import { frontMatterOf, FRONT_MATTER, type z } from '../../kernel/index.js';

export type Parsed<T> = { ok: true; data: T; body: string } | { ok: false; error: string };

/** One line naming the file and the field at fault. */
function issueLine(file: string, error: z.ZodError): string {
  const issue = error.issues[0]!;
  const field = issue.path.length ? `field "${issue.path.join('.')}"` : 'front matter';
  return `${file}: ${field}: ${issue.message}`;
}

/** `required`: a file without front matter is an error (SKILL.md); else it parses as `{}` (commands). */
export async function parseMarkdown<T>(file: string, text: string, schema: z.ZodType<T>, required: boolean): Promise<Parsed<T>> {
  const yamlText = frontMatterOf(text);
  const body = yamlText === undefined ? text : text.replace(FRONT_MATTER, '');
  let raw: unknown = {};
  if (yamlText === undefined) {
    if (required) return { ok: false, error: `${file}: no front matter (a --- block with name and description at the top)` };
  } else {
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
  const checked = schema.safeParse(raw);
  if (!checked.success) return { ok: false, error: issueLine(file, checked.error) };
  return { ok: true, data: checked.data, body: body.replace(/^\s*\n/, '') };
}
