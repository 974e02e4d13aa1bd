import { FRONT_MATTER, KeelError } from '../../kernel/index.js';

export interface Parsed {
  /** The YAML mapping between the `---` fences, or undefined when the file has none. */
  data?: Record<string, unknown>;
  /** The text after the front matter. */
  body: string;
}

/** Splits YAML front matter from a Markdown file. Throws a KeelError naming the file when it is not a mapping. */
export async function parseFrontMatter(text: string, file: string): Promise<Parsed> {
  // The kernel's definition, so the permission policy sees exactly the front matter loaded here.
  const match = FRONT_MATTER.exec(text);
  if (!match) return { body: text };
  const body = text.slice(match[0].length);
  const source = match[1] ?? '';
  if (!source.trim()) return { data: {}, body };
  const mod = await import('yaml');
  // yaml ships CommonJS for Node: bundled, its functions sit on the default export.
  const parse = typeof mod.parse === 'function' ? mod.parse : mod.default.parse;
  let data: unknown;
  try {
    data = parse(source);
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new KeelError(`${file}: front matter is not valid YAML: ${message}`, { code: 'config', exitCode: 2 });
  }
  if (data === null || data === undefined) return { data: {}, body };
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new KeelError(`${file}: front matter must be a mapping of settings (key: value)`, { code: 'config', exitCode: 2 });
  }
  return { data: data as Record<string, unknown>, body };
}

/** Settings a project file must not set: they would let a cloned repository redirect the API key or load code. */
const FORBIDDEN = new Set(['apikey', 'baseurl', 'provider', 'plugins', 'preset']);

function camel(key: string): string {
  return key.replace(/[_-]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Front matter keys (`permission_mode`) as config keys (`permissionMode`). */
export function toConfigValues(data: Record<string, unknown>, file: string): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const name = camel(key);
    if (FORBIDDEN.has(name.toLowerCase())) {
      throw new KeelError(`${file}: front matter: ${key}: cannot be set from an instructions file (set it in agent.config.ts or the environment)`, {
        code: 'config',
        exitCode: 2,
      });
    }
    values[name] = value;
  }
  return values;
}
