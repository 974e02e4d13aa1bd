/** Which proxy a URL goes through: `HTTPS_PROXY` / `HTTP_PROXY` by the URL's scheme, unless `NO_PROXY` names its host. */
import net from 'node:net';
import { KeelError } from '../../kernel/index.js';
import type { ResolvedNetwork, Sourced } from './settings.js';

export interface Proxy {
  url: URL;
  /** The variable that set it. */
  source: string;
  /** `http://user@host:port`: the proxy as messages name it, never with its password. */
  shown: string;
  host: string;
  port: number;
  /** `Basic …` when the URL carries credentials. */
  authorization?: string;
}

export type ProxyChoice = { proxy: Proxy } | { proxy?: undefined; why: 'none' | 'no_proxy'; entry?: string };

export function redact(url: URL): string {
  const user = url.username ? `${url.username}@` : '';
  return `${url.protocol}//${user}${url.host}`;
}

/**
 * A proxy setting that is no URL, as an error may show it: whatever sits between the scheme (if any) and the last `@`
 * after a `:` is a password, even one holding `/` or without a scheme (`alice:se/cret@proxy:3128`).
 */
function redactText(value: string): string {
  const at = value.lastIndexOf('@');
  if (at < 0) return value;
  const start = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value)?.[0].length ?? 0;
  const colon = value.slice(start, at).indexOf(':');
  return colon < 0 ? value : `${value.slice(0, start + colon)}${value.slice(at)}`;
}

/** Reads a proxy variable; a value without a scheme means `http://`. Errors name the variable. */
export function parseProxy(setting: Sourced): Proxy {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(setting.value) ? setting.value : `http://${setting.value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new KeelError(`${setting.source}: not a proxy URL: ${JSON.stringify(redactText(setting.value))}`, { code: 'ERR_PROXY_SETTING', exitCode: 2 });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new KeelError(`${setting.source}: proxy ${redact(url)} uses ${url.protocol.slice(0, -1)}, which Keel does not support (use an http:// or https:// proxy)`, { code: 'ERR_PROXY_SETTING', exitCode: 2 });
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const authorization = url.username
    ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
    : undefined;
  return { url, source: setting.source, shown: redact(url), host, port, ...(authorization ? { authorization } : {}) };
}

interface Rule {
  entry: string;
  matches(host: string, port: number): boolean;
}

/** An IP literal as node:net writes it, or undefined for a name. */
function ipOf(host: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const version = net.isIP(bare);
  return version ? { address: bare.toLowerCase(), family: version === 4 ? 'ipv4' : 'ipv6' } : undefined;
}

/**
 * `NO_PROXY` entries, separated by commas or spaces: `*` (everything), a host or domain (`example.com` and
 * `.example.com` / `*.example.com` match it and its subdomains), any of these with `:port`, an IP address, and a CIDR
 * range (`10.0.0.0/8`, `fd00::/8`) that IP literals in URLs are matched against (names are not resolved).
 */
export function parseNoProxy(value: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of value.split(/[\s,]+/).filter(Boolean)) {
    const entry = raw.toLowerCase();
    if (entry === '*') {
      rules.push({ entry, matches: () => true });
      continue;
    }
    const cidr = /^\[?([0-9a-f:.]+)\]?\/(\d{1,3})$/.exec(entry);
    if (cidr && net.isIP(cidr[1]!)) {
      const family = net.isIP(cidr[1]!) === 4 ? 'ipv4' : 'ipv6';
      const prefix = Number(cidr[2]);
      if (prefix <= (family === 'ipv4' ? 32 : 128)) {
        const list = new net.BlockList();
        list.addSubnet(cidr[1]!, prefix, family);
        rules.push({ entry: raw, matches: (host) => { const ip = ipOf(host); return Boolean(ip && list.check(ip.address, ip.family)); } });
        continue;
      }
    }
    // host:port, [v6]:port, a bare IPv6 address (more than one colon), or a host.
    let name = entry;
    let port: number | undefined;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
    if (bracketed) {
      name = bracketed[1]!;
      port = bracketed[2] ? Number(bracketed[2]) : undefined;
    } else if ((entry.match(/:/g) ?? []).length === 1) {
      const [h, p] = entry.split(':');
      name = h!;
      port = /^\d+$/.test(p!) ? Number(p) : undefined;
    }
    const portOk = (p: number) => port === undefined || port === p;
    const ip = ipOf(name);
    if (ip) {
      const list = new net.BlockList();
      list.addAddress(ip.address, ip.family);
      rules.push({ entry: raw, matches: (host, p) => { const hip = ipOf(host); return Boolean(hip && portOk(p) && list.check(hip.address, hip.family)); } });
      continue;
    }
    // `example.com.` (fully qualified) is `example.com`, as the URL's host is compared without its final dot.
    const domain = name.replace(/^\*?\./, '').replace(/\.$/, '');
    if (!domain) continue;
    rules.push({ entry: raw, matches: (host, p) => portOk(p) && (host === domain || host.endsWith(`.${domain}`)) });
  }
  return rules;
}

export class ProxyTable {
  private readonly https?: Proxy;
  private readonly http?: Proxy;
  private readonly bypass: Rule[];

  constructor(readonly settings: ResolvedNetwork) {
    if (settings.httpsProxy) this.https = parseProxy(settings.httpsProxy);
    if (settings.httpProxy) this.http = parseProxy(settings.httpProxy);
    this.bypass = settings.noProxy ? parseNoProxy(settings.noProxy.value) : [];
  }

  /** The proxy for `url`, or why there is none. */
  choose(url: URL): ProxyChoice {
    const proxy = url.protocol === 'https:' || url.protocol === 'wss:' ? this.https : url.protocol === 'http:' || url.protocol === 'ws:' ? this.http : undefined;
    if (!proxy) return { why: 'none' };
    const host = (url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname).toLowerCase().replace(/\.$/, '');
    const port = Number(url.port || (url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80));
    const rule = this.bypass.find((r) => r.matches(host, port));
    return rule ? { why: 'no_proxy', entry: rule.entry } : { proxy };
  }
}
