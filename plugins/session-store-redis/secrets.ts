// Mirrors plugins/session-store/secrets.ts (plugins never import each other).
/** Keeps credentials out of session files: known key values and anything shaped like an Anthropic key. */
const KEY_SHAPE = /sk-ant-[A-Za-z0-9_-]{8,}/g;
export const REDACTED = '[REDACTED]';

export type Redactor = (text: string) => string;

/**
 * Builds a redactor for serialized JSON text. Each secret is matched in its JSON-escaped form, which is how
 * it appears inside a serialized record. Secrets shorter than 8 characters are ignored (too likely to be
 * ordinary words).
 */
export function createRedactor(secrets: Array<string | undefined>): Redactor {
  const escaped = [...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= 8))].map((s) =>
    JSON.stringify(s).slice(1, -1),
  );
  return (text) => {
    let out = text;
    for (const secret of escaped) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out.includes('sk-ant-') ? out.replace(KEY_SHAPE, REDACTED) : out;
  };
}
