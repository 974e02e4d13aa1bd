/**
 * The settings surface: every path Keel (or a plugin of this build) loads as code or as settings, existing or
 * not yet created, plus Keel's own secrets. A write to one of them today would become code or permissions
 * tomorrow, so the permission policy asks before any tool writes one (every mode, bash included) and the
 * sandbox keeps them read-only. Plugins that read files of their own (`.mcp.json`, front matter) add them here.
 */
import path from 'node:path';

export type ProtectedAccess = 'read' | 'write';

export interface ProtectedEntry {
  /** An absolute path (a folder covers everything below it). Exactly one of `path` and `segment` is set. */
  path?: string;
  /**
   * A file or folder name matched against every segment of a path, wherever it is (`.git`, `agent.config.ts`):
   * a path whose segment matches is the entry itself or inside it.
   */
  segment?: RegExp;
  /** Why, for messages: "a Keel config file (it runs as code)". */
  why: string;
  /** Reads are protected too (secrets). Default: writes only. */
  read?: boolean;
  /**
   * Markdown whose YAML front matter holds settings (`AGENTS.md`): the file tools may change the body freely and
   * ask only when the front matter changes; bash and the sandbox treat the whole file as protected.
   */
  frontMatter?: boolean;
  /**
   * Sub-paths left out of the entry, by access, relative to where the entry matched (`memory` under `.keel` is
   * writable, `tool-outputs` under `$KEEL_HOME` readable).
   */
  except?: Array<{ path: string; access: ProtectedAccess | 'both' }>;
  /**
   * A large tree (a package folder): the sandbox binds it read-only and checks the folder itself afterwards, not a
   * copy of every file below it (50 MB of dependencies took 2.5 s per command to copy).
   */
  shallow?: boolean;
  /** Who added it (a plugin name or `kernel`), for `keel describe` and the README. */
  owner?: string;
}

export interface ProtectedMatch {
  entry: ProtectedEntry;
  /** A sentence for the user and the model: "<path> is a Keel config file (it runs as code)". */
  reason: string;
}

export function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * `isInside` for two paths already resolved (absolute and normalised, as `match` has them): on POSIX a string
 * comparison, where `path.relative` would resolve and split both again for every entry of every match.
 */
function insideResolved(child: string, root: string): boolean {
  if (path.sep !== '/') return isInside(child, root);
  if (child === root) return true;
  return child.length > root.length && child.startsWith(root) && (root.endsWith('/') || child.charCodeAt(root.length) === 47);
}

/** Shell start-up files: a write there runs at the user's next login or shell. */
export const SHELL_PROFILES = [
  '.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.profile', '.zshrc', '.zprofile', '.zshenv',
  '.zlogin', '.zlogout', '.kshrc', '.mkshrc', '.cshrc', '.tcshrc', '.login', '.inputrc',
];

/** Names of Keel's own config modules (searched from the working folder up to the project root, and in `$KEEL_HOME`). */
export const CONFIG_FILE = /^agent\.config\.(ts|mts|cts|js|mjs|cjs|json)$/;

/** YAML front matter: the block between `---` fences at the very top of a Markdown file (group 1: the YAML). */
export const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** The YAML source of a Markdown text's front matter, or undefined when it has none. */
export function frontMatterOf(text: string): string | undefined {
  return FRONT_MATTER.exec(text)?.[1];
}

export class ProtectedPaths {
  private readonly entries: ProtectedEntry[] = [];
  private frozen = false;

  constructor(private readonly owner: () => string = () => 'kernel') {}

  /** Adds an entry. Paths are taken as given: pass them resolved (symlinks followed) so matches are exact. */
  add(entry: ProtectedEntry): void {
    if (this.frozen) throw new Error(`cannot protect ${entry.path ?? String(entry.segment)} after the kernel is sealed`);
    if ((entry.path === undefined) === (entry.segment === undefined)) throw new Error('a protected entry needs exactly one of path and segment');
    this.entries.push({ ...entry, path: entry.path === undefined ? undefined : path.resolve(entry.path), owner: entry.owner ?? this.owner() });
  }

  freeze(): void {
    this.frozen = true;
  }

  list(): readonly ProtectedEntry[] {
    return this.entries;
  }

  /**
   * The entry that protects `resolved` (an absolute, already resolved path) for `access`, or undefined: the first
   * whole-file entry, else the first front-matter entry. So a front-matter match means no whole-file entry applies.
   */
  match(resolved: string, access: ProtectedAccess): ProtectedMatch | undefined {
    const abs = path.resolve(resolved);
    let segments: string[] | undefined;
    let frontMatter: ProtectedEntry | undefined;
    for (const entry of this.entries) {
      if (access === 'read' && !entry.read) continue;
      const base = this.base(entry, abs, (segments ??= abs.split(path.sep)));
      if (base === undefined) continue;
      if (entry.except?.some((e) => (e.access === 'both' || e.access === access) && insideResolved(abs, path.join(base, e.path)))) continue;
      if (!entry.frontMatter) return { entry, reason: `${abs} is ${entry.why}` };
      frontMatter ??= entry;
    }
    return frontMatter && { entry: frontMatter, reason: `${abs} is ${frontMatter.why}` };
  }

  /** Where the entry matches `abs` (its path, or the path up to the matching segment), or undefined. */
  private base(entry: ProtectedEntry, abs: string, segments: string[]): string | undefined {
    if (entry.path !== undefined) return insideResolved(abs, entry.path) ? entry.path : undefined;
    const at = segments.findIndex((segment) => entry.segment!.test(segment));
    return at === -1 ? undefined : segments.slice(0, at + 1).join(path.sep) || path.sep;
  }
}

/** Files in the user's home that hold credentials: protected for reads too (read tools ask; imports refuse them). */
const HOME_SECRETS = ['.aws', '.gnupg', '.netrc', '.git-credentials', '.docker/config.json', '.kube', '.config/gh', '.npmrc'];

/**
 * The entries the kernel itself owns: Keel's config modules, `$KEEL_HOME`, the project's `.keel/`, the places
 * outside Keel that turn a write into code (git hooks and config, shell profiles, SSH), credentials in the home
 * folder, and config modules loaded by path (`--config`).
 */
export function coreProtectedEntries(ctx: { keelHome: string; home: string; configFiles?: string[] }): ProtectedEntry[] {
  const entries: ProtectedEntry[] = [
    { segment: CONFIG_FILE, why: 'a Keel config file (it runs as code)' },
    ...(ctx.configFiles ?? []).map((file) => ({ path: file, why: 'a config file Keel loads (it runs as code)' })),
    { segment: /^\.git$/, why: 'inside a .git directory (hooks and config run code)' },
    { segment: /^\.keel$/, why: "in .keel/ (Keel's project settings and agents)", except: [{ path: 'memory', access: 'write' }] },
    // Claude Code's files. claude-settings owns the settings*.json it reads; the rest (.mcp.json, agents/,
    // commands/) no plugin of this build reads yet, and a write today would load tomorrow when one does.
    { segment: /^\.mcp\.json$/, why: 'an MCP server list (.mcp.json: its servers run as programs)' },
    // The whole .claude/ folder, project or user: settings*.json (permissions, hooks), agents/, commands/.
    { segment: /^\.claude$/, why: 'in .claude/ (Claude Code settings, hooks, agents and commands)' },
    { path: path.join(ctx.home, '.claude.json'), why: "Claude Code's user settings (~/.claude.json: MCP servers)" },
    ...SHELL_PROFILES.map((name) => ({ path: path.join(ctx.home, name), why: 'a shell profile (it runs at the next shell)' })),
    { path: path.join(ctx.home, '.config', 'fish'), why: 'a shell profile (it runs at the next shell)' },
    { path: '/etc', why: 'system configuration' },
    { path: path.join(ctx.home, '.gitconfig'), why: "git's user config (aliases, pagers and hooks run code)" },
    { path: path.join(ctx.home, '.config', 'git'), why: "git's user config (aliases, pagers and hooks run code)" },
    { path: path.join(ctx.home, '.ssh'), why: 'SSH keys and config', read: true },
    ...HOME_SECRETS.map((name) => ({ path: path.join(ctx.home, name), why: 'a credentials file', read: true })),
    // Dotenv files hold the project's secrets (`.env`, `.env.local`); their templates (`.env.example`) do not.
    { segment: /^\.env(?!\.(example|sample|template|dist)$)(\.[\w.-]+)?$/, why: 'a dotenv file (it holds secrets)', read: true },
  ];
  if (ctx.keelHome) {
    entries.unshift({
      path: ctx.keelHome,
      why: "in KEEL_HOME (Keel's own settings, trust, credentials and every session's saved tool outputs)",
      read: true,
      // Saved outputs are no exception: a session reads its own (savedOutputDir) and no other session's, which
      // the permission policy and the sandbox grant per session.
      // The user's own skills (plugin `skills`): instructions and bundled files the model reads when one is used.
      except: [{ path: 'skills', access: 'read' }],
    });
  }
  return entries;
}

/**
 * Where Keel saves the tool outputs it cut or summarised for one session to read on (`$KEEL_HOME/tool-outputs/<id>`):
 * the only part of `$KEEL_HOME` that session's tools read unasked. Other sessions' and projects' outputs stay protected.
 */
export function savedOutputDir(keelHome: string, sessionId: string): string {
  return path.join(keelHome, 'tool-outputs', sessionId.replace(/[^\w.-]/g, '_').replace(/^\.+$/, (dots) => '_'.repeat(dots.length)));
}
