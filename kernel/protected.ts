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
  /** Who added it (a plugin name or `kernel`), for `keel describe` and the README. */
  owner?: string;
}

export interface ProtectedMatch {
  entry: ProtectedEntry;
  /** A sentence for the user and the model: "<path> is a Keel config file (it runs as code)". */
  reason: string;
}

function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/** Shell start-up files: a write there runs at the user's next login or shell. */
export const SHELL_PROFILES = [
  '.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.profile', '.zshrc', '.zprofile', '.zshenv',
  '.zlogin', '.zlogout', '.kshrc', '.mkshrc', '.cshrc', '.tcshrc', '.login', '.inputrc',
];

/** Names of Keel's own config modules (searched from the working folder up to the project root, and in `$KEEL_HOME`). */
export const CONFIG_FILE = /^agent\.config\.(ts|mts|cts|js|mjs|cjs|json)$/;

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

  /** The first entry that protects `resolved` (an absolute, already resolved path) for `access`, or undefined. */
  match(resolved: string, access: ProtectedAccess): ProtectedMatch | undefined {
    const abs = path.resolve(resolved);
    for (const entry of this.entries) {
      if (access === 'read' && !entry.read) continue;
      const base = this.base(entry, abs);
      if (base === undefined) continue;
      if (entry.except?.some((e) => (e.access === 'both' || e.access === access) && isInside(abs, path.join(base, e.path)))) continue;
      return { entry, reason: `${abs} is ${entry.why}` };
    }
    return undefined;
  }

  /** Where the entry matches `abs` (its path, or the path up to the matching segment), or undefined. */
  private base(entry: ProtectedEntry, abs: string): string | undefined {
    if (entry.path !== undefined) return isInside(abs, entry.path) ? entry.path : undefined;
    const segments = abs.split(path.sep);
    const at = segments.findIndex((segment) => entry.segment!.test(segment));
    return at === -1 ? undefined : segments.slice(0, at + 1).join(path.sep) || path.sep;
  }
}

/**
 * The entries the kernel itself owns: Keel's config modules, `$KEEL_HOME`, the project's `.keel/` and the
 * places outside Keel that turn a write into code (git hooks and config, shell profiles, SSH).
 */
export function coreProtectedEntries(ctx: { keelHome: string; home: string }): ProtectedEntry[] {
  const entries: ProtectedEntry[] = [
    { segment: CONFIG_FILE, why: 'a Keel config file (it runs as code)' },
    { segment: /^\.git$/, why: 'inside a .git directory (hooks and config run code)' },
    { segment: /^\.keel$/, why: "in .keel/ (Keel's project settings and agents)", except: [{ path: 'memory', access: 'write' }] },
    ...SHELL_PROFILES.map((name) => ({ path: path.join(ctx.home, name), why: 'a shell profile (it runs at the next shell)' })),
    { path: path.join(ctx.home, '.config', 'fish'), why: 'a shell profile (it runs at the next shell)' },
    { path: '/etc', why: 'system configuration' },
    { path: path.join(ctx.home, '.gitconfig'), why: "git's user config (aliases, pagers and hooks run code)" },
    { path: path.join(ctx.home, '.config', 'git'), why: "git's user config (aliases, pagers and hooks run code)" },
    { path: path.join(ctx.home, '.ssh'), why: 'SSH keys and config', read: true },
  ];
  if (ctx.keelHome) {
    entries.unshift({
      path: ctx.keelHome,
      why: "in KEEL_HOME (Keel's own settings, trust and credentials)",
      read: true,
      // Tool outputs Keel cut or summarised and told the model to read on (compact-micro, compact-api-micro).
      except: [
        { path: 'tool-outputs', access: 'read' },
        { path: path.join('cache', 'compact-api-micro'), access: 'read' },
      ],
    });
  }
  return entries;
}
