/** Claude Code's settings.json → Keel config values: permission rules (tool names mapped), hooks, env, model, outputStyle, statusLine. */
import path from 'node:path';
import { canonicalToolName, KeelError, PATH_RULE_TOOLS } from '../../kernel/index.js';

/**
 * One rule in Keel's syntax. Claude Code's path specifiers: `//abs` is absolute, `~/x` is under home, `/x` and
 * `./x` are relative to the settings file's project (Keel's plain relative form).
 */
export function mapRule(rule: string): string {
  const match = /^([A-Za-z_][\w-]*)(?:\((.*)\))?$/s.exec(rule.trim());
  if (!match) return rule;
  const [, tool, spec] = match;
  const name = canonicalToolName(tool!);
  if (spec === undefined) return name;
  let specifier = spec;
  if (PATH_RULE_TOOLS.has(name)) {
    if (specifier.startsWith('//')) specifier = specifier.slice(1);
    else if (specifier.startsWith('./')) specifier = specifier.slice(2);
    else if (specifier.startsWith('/')) specifier = specifier.slice(1);
  }
  return `${name}(${specifier})`;
}

function strings(value: unknown, where: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new KeelError(`${where}: must be an array of strings`, { code: 'config', exitCode: 2 });
  return value as string[];
}

/** The Keel config values a settings file holds; unknown keys are left alone (Claude Code has many Keel does not use). */
export function toConfigValues(settings: unknown, file: string): Record<string, unknown> {
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw new KeelError(`${file}: must be a JSON object`, { code: 'config', exitCode: 2 });
  }
  const s = settings as Record<string, unknown>;
  const values: Record<string, unknown> = {};
  if (s.permissions !== undefined) {
    const p = s.permissions as Record<string, unknown>;
    if (typeof p !== 'object' || p === null) throw new KeelError(`${file}: permissions: must be an object`, { code: 'config', exitCode: 2 });
    const rules: Record<string, string[]> = {};
    for (const kind of ['allow', 'ask', 'deny'] as const) {
      const list = strings(p[kind], `${file}: permissions.${kind}`).map(mapRule);
      if (list.length) rules[kind] = list;
    }
    if (Object.keys(rules).length) values.permissions = rules;
    if (typeof p.defaultMode === 'string') values.permissionMode = p.defaultMode;
  }
  if (s.hooks !== undefined) values.hooks = s.hooks;
  if (s.env !== undefined) values.env = s.env;
  if (typeof s.model === 'string') values.model = s.model;
  // Read by the plugins that own them (output-styles, status-line), which validate their shapes.
  if (s.outputStyle !== undefined) values.outputStyle = s.outputStyle;
  if (s.statusLine !== undefined) values.statusLine = s.statusLine;
  if (s.sandbox !== undefined) {
    const box = s.sandbox as Record<string, unknown>;
    if (typeof box !== 'object' || box === null || (box.enabled !== undefined && typeof box.enabled !== 'boolean')) {
      throw new KeelError(`${file}: sandbox.enabled: must be true or false`, { code: 'config', exitCode: 2 });
    }
    if (typeof box.enabled === 'boolean') values.sandbox = { enabled: box.enabled };
  }
  return values;
}

export const settingsFiles = (projectRoot: string, home: string) => ({
  user: path.join(home, '.claude', 'settings.json'),
  project: [path.join(projectRoot, '.claude', 'settings.json'), path.join(projectRoot, '.claude', 'settings.local.json')],
});
