/**
 * The config searches where Keel runs code anyway, through cosmiconfig: the user's config in `$KEEL_HOME`, and a
 * trusted project's from the working folder up to the project root (never above). Keel's own names only
 * (`agent.config.*`, no package.json key, no rc files) and its own loader (load-module.ts: TypeScript, cached, file:line errors).
 *
 * Built from cosmiconfig's Explorer rather than `cosmiconfig()`: that function first searches `process.cwd()` for a
 * meta-config (`.config/config.*`, run as code, or package.json's `cosmiconfig` key), whatever the folder's trust.
 * The Explorer alone never does, and its `none` strategy searches one folder, so the walk up stops at the root.
 * An untrusted folder is never searched here: config-files.ts only checks it for the names Keel would load.
 */
import path from 'node:path';
import { CONFIG_FILES } from './config-files.js';
import { loadConfigModule } from './load-module.js';

interface Found {
  filepath: string;
  config: unknown;
  isEmpty?: boolean;
}

interface Explorer {
  search(from: string): Promise<Found | null>;
}

type ExplorerClass = new (options: Record<string, unknown>) => Explorer;

let explorer: Promise<Explorer> | undefined;

/** cosmiconfig, loaded on first use: a run with no config file never loads it. */
function keelExplorer(): Promise<Explorer> {
  explorer ??= (async () => {
    const { Explorer } = (await import('cosmiconfig/dist/Explorer.js')) as unknown as { Explorer: ExplorerClass };
    const load = (file: string) => loadConfigModule(file);
    return new Explorer({
      moduleName: 'keel',
      searchPlaces: CONFIG_FILES,
      loaders: Object.fromEntries(CONFIG_FILES.map((name) => [path.extname(name), load])),
      searchStrategy: 'none',
      metaConfigFilePath: null,
      // An empty file is still the config Keel found: it loads (and fails) as any other would.
      ignoreEmptySearchPlaces: false,
      mergeImportArrays: true,
      mergeSearchPlaces: false,
      cache: false,
      transform: (result: Found | null) => result,
    });
  })();
  return explorer;
}

export interface LoadedConfig {
  file: string;
  values: Record<string, unknown>;
}

async function valuesOf(found: Found): Promise<Record<string, unknown>> {
  // cosmiconfig skips the loader for a blank file; Keel's loader says what is wrong with it.
  if (found.isEmpty) return loadConfigModule(found.filepath);
  return found.config as Record<string, unknown>;
}

/** Searches `from`, then each parent up to `root` (inclusive, never above), and loads the first config found. */
export async function searchConfig(from: string, root: string): Promise<LoadedConfig | undefined> {
  const search = await keelExplorer();
  const top = path.resolve(root);
  let dir = path.resolve(from);
  for (;;) {
    const found = await search.search(dir);
    if (found) return { file: found.filepath, values: await valuesOf(found) };
    const parent = path.dirname(dir);
    const rel = path.relative(top, dir);
    if (dir === top || parent === dir || rel === '..' || rel.startsWith(`..${path.sep}`)) return undefined;
    dir = parent;
  }
}
