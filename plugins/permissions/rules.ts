/**
 * Permission rules, in the spirit of Claude Code's with Keel's tool names: `bash`, `bash(npm test)`,
 * `bash(npm run *)`, `read_file(src/**)`, `edit_file(/abs/**)`, `write_file(~/notes/*)`,
 * `web_fetch(domain:example.com)`, `mcp__server`, `mcp__server__tool`, `mcp__server__*`; Claude Code's tool
 * names (`Read`, `Bash(npm test)`, `WebFetch(domain:…)`) are aliases of Keel's.
 */
import path from 'node:path';
import picomatch from 'picomatch';
import { canonicalToolName } from '../../kernel/index.js';
import { expandHome, resolveReal } from './paths.js';

export type RuleKind = 'allow' | 'ask' | 'deny';

export interface Rule {
  kind: RuleKind;
  /** The rule as written, for messages. */
  text: string;
  /** Tool name pattern (`*` only as a wildcard, e.g. `mcp__server__*`). */
  tool: string;
  specifier?: string;
}

const RULE = /^([A-Za-z0-9_*-]+)(?:\((.*)\))?$/s;

/** Parses one rule; throws a one-line error naming the rule. */
export function parseRule(kind: RuleKind, text: string, where: string): Rule {
  const match = RULE.exec(text.trim());
  if (!match) throw new Error(`${where}: invalid permission rule "${text}" (expected ToolName or ToolName(specifier), e.g. bash(npm test))`);
  const specifier = match[2]?.trim();
  if (match[2] !== undefined && !specifier) throw new Error(`${where}: invalid permission rule "${text}": the specifier in () is empty`);
  if (specifier?.startsWith('domain:') && hostOf(specifier.slice(7).trim().replace(/^\*\./, '')) === undefined) {
    throw new Error(`${where}: invalid permission rule "${text}": "${specifier.slice(7).trim()}" is not a domain (e.g. domain:example.com)`);
  }
  // Claude Code's tool names (`Read`, `Bash`, `Task`, …) name Keel's tools.
  return { kind, text, tool: canonicalToolName(match[1]), specifier };
}

export function parseRules(rules: { allow: string[]; ask: string[]; deny: string[] }, source: string): Rule[] {
  const out: Rule[] = [];
  for (const kind of ['deny', 'ask', 'allow'] as const) {
    rules[kind].forEach((text, i) => out.push(parseRule(kind, text, `${source}: permissions.${kind}[${i}]`)));
  }
  return out;
}

function escapeRegex(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/** `mcp__server` also names every tool of that server. */
export function toolMatches(rule: Rule, toolName: string): boolean {
  if (rule.tool === toolName) return true;
  if (rule.tool.startsWith('mcp__') && !rule.tool.slice(5).includes('__') && !rule.tool.includes('*')) {
    return toolName.startsWith(`${rule.tool}__`);
  }
  if (!rule.tool.includes('*')) return false;
  return new RegExp(`^${rule.tool.split('*').map(escapeRegex).join('.*')}$`).test(toolName);
}

/** A bare rule (no specifier) covers every call of the tool. */
export function isBare(rule: Rule): boolean {
  return rule.specifier === undefined;
}

/**
 * Matches one simple command (its words joined by spaces) against a bash specifier: `*` matches anything,
 * a trailing ` *` also matches the bare prefix, and Claude Code's `prefix:*` is a word prefix.
 */
export function shellPatternMatches(specifier: string, command: string): boolean {
  if (specifier.endsWith(':*')) {
    const prefix = specifier.slice(0, -2).trim();
    return command === prefix || command.startsWith(`${prefix} `);
  }
  if (specifier.endsWith(' *') && command === specifier.slice(0, -2).trim()) return true;
  const regex = new RegExp(`^${specifier.split('*').map(escapeRegex).join('.*')}$`, 's');
  return regex.test(command);
}

export interface PathRuleContext {
  root: string;
  home: string;
}

const matcherCache = new Map<string, (p: string) => boolean>();

/**
 * Matches a resolved path against a path specifier: `/abs/…` is absolute, `~/…` is under the home
 * directory, anything else is relative to the project root. A specifier without glob characters covers
 * the path itself and everything below it. The specifier's fixed prefix is resolved like the path.
 */
export function pathPatternMatches(specifier: string, resolved: string, ctx: PathRuleContext): boolean {
  const key = `${ctx.root}\0${ctx.home}\0${specifier}`;
  let matcher = matcherCache.get(key);
  if (!matcher) {
    const expanded = expandHome(specifier, ctx.home);
    const absolute = path.isAbsolute(expanded) ? expanded : path.join(ctx.root, expanded);
    const scan = picomatch.scan(absolute);
    const base = scan.isGlob ? resolveReal(scan.base || '/') : resolveReal(absolute);
    const glob = scan.isGlob ? `${base.replace(/\/$/, '')}/${scan.glob}` : base;
    const exact = picomatch(glob, { dot: true });
    const below = scan.isGlob ? undefined : picomatch(`${glob.replace(/\/$/, '')}/**`, { dot: true });
    matcher = (p: string) => exact(p) || (below?.(p) ?? false);
    matcherCache.set(key, matcher);
  }
  return matcher(resolved);
}

/**
 * True when a path specifier could match something at or below the folder `dir` (a resolved path): its fixed
 * part is inside `dir`, or it is a glob whose fixed part holds `dir`. Used for commands that read or write a
 * whole folder (`grep -r`, `tar -c`, `rm -r`).
 */
export function pathPatternReachesInto(specifier: string, dir: string, ctx: PathRuleContext): boolean {
  const expanded = expandHome(specifier, ctx.home);
  const absolute = path.isAbsolute(expanded) ? expanded : path.join(ctx.root, expanded);
  const scan = picomatch.scan(absolute);
  const base = resolveReal(scan.isGlob ? scan.base || '/' : absolute);
  return isWithin(base, dir) || (scan.isGlob && isWithin(dir, base));
}

function isWithin(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * `domain:example.com` covers the host and its subdomains; anything else is a URL where `*` matches anything. Hosts
 * are compared as the fetch will resolve them: lower case, IDNs in punycode, without the trailing dot of a fully
 * qualified name (`http://example.com./` reaches example.com).
 */
export function urlPatternMatches(specifier: string, url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const host = bareHost(parsed.hostname);
  if (specifier.startsWith('domain:')) {
    const written = specifier.slice(7).trim();
    const wildcard = written.startsWith('*.');
    const domain = hostOf(wildcard ? written.slice(2) : written);
    if (domain === undefined) return false;
    if (wildcard) return host.endsWith(`.${domain}`);
    return host === domain || host.endsWith(`.${domain}`);
  }
  // `*` matches anything, `/` included: `https://evil.example/*` must also cover `https://evil.example/a/b`.
  parsed.hostname = host;
  const glob = new RegExp(`^${specifier.split('*').map(escapeRegex).join('.*')}$`, 's');
  return glob.test(url) || glob.test(parsed.href);
}

function bareHost(hostname: string): string {
  return hostname.toLowerCase().replace(/\.+$/, '');
}

/** A rule's domain as URL parsing writes it (`例え.jp` → `xn--r8jz45g.jp`); undefined when it is no host. */
function hostOf(domain: string): string | undefined {
  try {
    const host = bareHost(new URL(`http://${domain}/`).hostname);
    return host || undefined;
  } catch {
    return undefined;
  }
}
