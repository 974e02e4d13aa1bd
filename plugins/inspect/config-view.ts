/** `keel config`: the merged config, each key with the layer that set it. */
import type { Kernel, PackageSource } from '../../kernel/index.js';

/** Keys whose values are secrets: shown as set or not, never printed. */
const SECRET = /key|token|secret|password/i;
/** Bookkeeping the CLI adds to the resolved config; not settings anyone wrote. */
const INTERNAL = new Set(['sources', 'extra', 'cwd', 'projectRoot', 'keelHome', 'trusted', 'preset', 'plugins', 'disable', 'packages', 'managed']);

function redact(key: string, value: unknown): unknown {
  if (SECRET.test(key)) return typeof value === 'string' && value ? '[set]' : value;
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, redact(k, v)]));
  }
  return value;
}

export interface ConfigEntry {
  key: string;
  value: unknown;
  source: string;
}

export function configEntries(kernel: Kernel): ConfigEntry[] {
  const config = kernel.config as Record<string, unknown>;
  const sources = kernel.config.sources ?? {};
  const entries: ConfigEntry[] = [];
  const preset = kernel.config.preset;
  const packages = kernel.config.packages ?? [];
  const fromPackage = (s: PackageSource) => `${s.source}: ${s.key}, package ${s.package}${s.version ? `@${s.version}` : ''} from ${s.path}`;
  const presetName = typeof preset === 'string' ? preset : preset.name;
  const presetPackage = packages.find((s) => s.kind === 'preset' && s.provides === presetName && s.key === 'preset');
  entries.push({ key: 'preset', value: presetName, source: presetPackage ? fromPackage(presetPackage) : (sources.preset ?? 'default') });
  entries.push({ key: 'plugins', value: kernel.plugins.map((p) => p.name), source: sources.plugins ? `preset + ${sources.plugins}` : 'preset' });
  // Each plugin or preset named by package: the entry that named it and the folder it came from.
  for (const s of packages) if (s !== presetPackage) entries.push({ key: s.key === 'preset.extends' ? 'preset.extends' : `plugins.${s.provides}`, value: s.provides, source: fromPackage(s) });
  if (kernel.config.disable.length) entries.push({ key: 'disable', value: kernel.config.disable, source: sources.disable ?? 'config' });
  for (const key of Object.keys(config).sort()) {
    if (INTERNAL.has(key) || config[key] === undefined) continue;
    const value = config[key];
    if (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) continue;
    if (key === 'permissions') {
      const rules = value as Record<string, string[]>;
      if (!Object.values(rules).some((list) => list.length)) continue;
    }
    entries.push({ key, value: redact(key, value), source: labelled(sources[key] ?? 'default') });
  }
  // What `--model sonnet` and the other aliases mean, from the provider's table.
  const aliases = kernel.services.get('model-aliases') as { table?: Record<string, string> } | undefined;
  if (aliases?.table && (kernel.config.provider ?? 'anthropic') === 'anthropic') entries.push({ key: 'modelAliases', value: aliases.table, source: 'query-anthropic; [1m] after one asks for the 1M context' });
  entries.push(...managedEntries(kernel));
  return entries;

  /** A value a managed file set cannot be overridden: it says so. */
  function labelled(source: string): string {
    return kernel.config.managed?.files.includes(source) ? `${source} (managed)` : source;
  }
}

/** The managed switches that are not config values of their own. */
function managedEntries(kernel: Kernel): ConfigEntry[] {
  const policy = kernel.config.managed;
  if (!policy) return [];
  const managed = (file: string) => `${file} (managed)`;
  const entries: ConfigEntry[] = [];
  if (policy.disableBypassPermissionsMode) entries.push({ key: 'disableBypassPermissionsMode', value: 'disable', source: managed(policy.disableBypassPermissionsMode) });
  if (policy.allowManagedHooksOnly) entries.push({ key: 'allowManagedHooksOnly', value: true, source: managed(policy.allowManagedHooksOnly) });
  for (const list of policy.allowedMcpServers) entries.push({ key: 'allowedMcpServers', value: list.servers, source: managed(list.file) });
  for (const list of policy.deniedMcpServers) entries.push({ key: 'deniedMcpServers', value: list.servers, source: managed(list.file) });
  return entries;
}

export function formatConfig(kernel: Kernel): string {
  const lines = [`Project: ${kernel.config.projectRoot}${kernel.config.trusted === false ? ' (untrusted: its config files were not loaded)' : ''}`];
  for (const entry of configEntries(kernel)) lines.push(`${entry.key} = ${JSON.stringify(entry.value)}  (${entry.source})`);
  return lines.join('\n');
}
