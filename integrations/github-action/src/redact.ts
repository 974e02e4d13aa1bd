/**
 * What the action writes to GitHub from Keel's run (the comment, its progress, the job summary, the outputs) passes
 * through here first: every secret the action knows of is replaced with `***`. A prompt-injected model that read the
 * key from a command's environment, or the job's token from the checkout's git config, cannot post it. GitHub masks
 * secrets in the log only; a comment or an output is not masked.
 */
import { spawnSync } from 'node:child_process';

/** Shorter values are not secrets worth hiding, and replacing them would garble ordinary text. */
export const MIN_SECRET = 8;

export type Redact = (text: string) => string;

export function redactor(secrets: Iterable<string>): Redact {
  const known = [...new Set([...secrets].filter((s) => s.length >= MIN_SECRET))].sort((a, b) => b.length - a.length);
  return (text) => known.reduce((out, secret) => out.split(secret).join('***'), text);
}

/** Every string inside a JSON value redacted (structured output keeps its shape). */
export function redactValue(value: unknown, redact: Redact): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, redact));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k), redactValue(v, redact)]));
  return value;
}

/**
 * The credentials actions/checkout persisted for the checkout (`http.<url>.extraheader: AUTHORIZATION: basic …`,
 * also through an included config file): the header's value and the token inside it. The agent can read them, and
 * git uses them to push, so they stay; they are only kept out of what the action posts.
 */
export function checkoutCredentials(workspace: string): string[] {
  const found = spawnSync('git', ['config', '--includes', '--get-regexp', '^http\\..*\\.extraheader$'], { cwd: workspace, encoding: 'utf8', timeout: 10_000 });
  if (found.status !== 0 || typeof found.stdout !== 'string') return [];
  const secrets: string[] = [];
  for (const line of found.stdout.split('\n')) {
    const header = /authorization:\s*(?:basic|bearer|token)\s+(\S+)/i.exec(line);
    if (!header) continue;
    const value = header[1]!;
    secrets.push(value);
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (/^basic$/i.test(/authorization:\s*(\S+)/i.exec(line)?.[1] ?? '') && colon > 0) secrets.push(decoded.slice(colon + 1), decoded);
  }
  return secrets;
}
