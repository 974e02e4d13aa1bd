/**
 * Claude Code's flags, so scripts and SDK hosts written for `claude` drive Keel unchanged: their table, and the
 * config values they set. (`--permission-prompt-tool` belongs to the sdk plugin, which registers it.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KeelError } from '../kernel/errors.js';
import type { CommandLine } from './options.js';
import { splitToolList } from '../kernel/tool-names.js';
import type { CliFlag } from './program.js';

const uuid = (value: string) => {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) throw new KeelError(`--session-id: expected a UUID, got "${value}"`, { exitCode: 2 });
  return value.toLowerCase();
};

const positiveUsd = (value: string) => {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new KeelError(`--max-budget-usd: expected a positive number of US dollars, got "${value}"`, { exitCode: 2 });
  return n;
};

/** `--json-schema`: the schema as JSON text, or a file holding it. */
export function jsonSchemaFlag(value: string): Record<string, unknown> {
  const inline = value.trimStart().startsWith('{');
  let text = value;
  if (!inline) {
    try {
      text = readFileSync(path.resolve(value), 'utf8');
    } catch (err) {
      throw new KeelError(`--json-schema: "${value}" is neither JSON nor a readable file (${(err as NodeJS.ErrnoException).code ?? String(err)})`, { exitCode: 2 });
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new KeelError(`--json-schema: ${inline ? 'the schema' : value} is not valid JSON: ${(err as Error).message}`, { exitCode: 2 });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new KeelError('--json-schema: the schema must be a JSON object', { exitCode: 2 });
  return parsed as Record<string, unknown>;
}

const nonEmpty = (flag: string) => (value: string) => {
  if (!value.trim()) throw new KeelError(`${flag}: expected a value, got an empty string`, { exitCode: 2 });
  return value;
};

/** `--setting-sources user,project,local`: which of Claude Code's settings files are read ("" for none). */
export function settingSourcesFlag(value: string): string[] {
  const sources = value.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = sources.find((s) => !['user', 'project', 'local'].includes(s));
  if (bad) throw new KeelError(`--setting-sources: unknown source "${bad}" (expected a comma-separated list of user, project, local)`, { exitCode: 2 });
  return sources;
}

/** `--agents`: Claude Code's custom agents as JSON, `{"name": {"description", "prompt", "tools"?, "model"?}}`. */
export function agentsFlag(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new KeelError(`--agents: not valid JSON: ${(err as Error).message}`, { exitCode: 2 });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new KeelError('--agents: expected a JSON object of agents by name', { exitCode: 2 });
  for (const [name, def] of Object.entries(parsed)) {
    const d = def as Record<string, unknown> | null;
    if (typeof d !== 'object' || d === null || typeof d.description !== 'string' || typeof d.prompt !== 'string') {
      throw new KeelError(`--agents: agent "${name}" needs "description" and "prompt" strings`, { exitCode: 2 });
    }
  }
  return parsed as Record<string, unknown>;
}

/** Which log sources `--debug [filter]` shows: all, those named ("api,hooks"), or all but the "!"-named. */
export function debugFilter(filter: string | boolean | undefined): (source: string | undefined) => boolean {
  if (typeof filter !== 'string' || !filter.trim()) return () => true;
  const names = filter.split(',').map((n) => n.trim()).filter(Boolean);
  const excluded = names.filter((n) => n.startsWith('!')).map((n) => n.slice(1));
  const included = names.filter((n) => !n.startsWith('!'));
  return (source) => {
    const name = source ?? '';
    if (excluded.includes(name)) return false;
    return included.length === 0 || included.includes(name);
  };
}

const OWNER = 'claude-compat';

const FLAGS: CliFlag[] = [
  { name: 'allowedTools', aliases: ['allowed-tools'], value: '<rules>', description: 'permission rules to allow (comma- or space-separated; repeatable)', repeatable: true, default: [] },
  { name: 'disallowedTools', aliases: ['disallowed-tools'], value: '<rules>', description: 'permission rules to deny (comma- or space-separated; repeatable)', repeatable: true, default: [] },
  { name: 'tools', value: '<names>', description: 'the only tools this agent has ("" for none, "default" for all)', repeatable: true },
  { name: 'system-prompt', value: '<text>', description: "replace Keel's base system prompt" },
  { name: 'append-system-prompt', value: '<text>', description: 'append to the system prompt' },
  { name: 'dangerously-skip-permissions', description: 'the bypassPermissions mode (= auto): protected paths are still asked' },
  { name: 'add-dir', value: '<dir>', description: 'another directory tools may use as if inside the project (repeatable)', repeatable: true, default: [] },
  { name: 'session-id', value: '<uuid>', description: 'the id of the new session', parse: uuid },
  { name: 'settings', value: '<file|json>', description: "more settings in Claude Code's settings.json format, above the settings files" },
  { name: 'setting-sources', value: '<sources>', description: "which of Claude Code's settings files to read: user,project,local (\"\" for none)", parse: settingSourcesFlag },
  { name: 'strict-mcp-config', description: 'use only the MCP servers of --mcp-config, none from config files or .mcp.json' },
  { name: 'agents', value: '<json>', description: 'custom sub-agents: {"name": {"description", "prompt", "tools"?, "model"?}}', parse: agentsFlag },
  { name: 'debug', short: 'd', value: '[filter]', description: 'diagnostics on stderr; a filter names log sources ("api,hooks") or leaves some out ("!mcp-bridge")' },
  { name: 'json-schema', value: '<schema|file>', description: 'end with an answer that validates against this JSON Schema (result field structured_output)', parse: jsonSchemaFlag },
  { name: 'max-budget-usd', value: '<usd>', description: "no model request starts once the session's cost reached this many US dollars", parse: positiveUsd },
  { name: 'fallback-model', value: '<model>', description: 'the model to switch to when the main model stays overloaded', parse: nonEmpty('--fallback-model') },
  { name: 'include-partial-messages', description: 'stream-json: also print stream_event lines as the model writes', modes: ['headless', 'sdk'] },
];

/** Keel's own headless flags beside Claude Code's (the goal plugin reads them as config `goal`, `goalCheck`). */
const GOAL_FLAGS: CliFlag[] = [
  { name: 'goal', value: '<condition>', description: 'with -p: keep working until the condition holds (checked after each turn by the small model)', parse: nonEmpty('--goal'), owner: 'goal' },
  { name: 'goal-check', value: '<command>', description: "with --goal: a command whose exit code 0 is part of the goal (run under the permission policy)", parse: nonEmpty('--goal-check'), owner: 'goal' },
];

export const CLAUDE_FLAGS: CliFlag[] = [...FLAGS.map((flag) => ({ ...flag, owner: OWNER })), ...GOAL_FLAGS];

/** `--tools ""` gives no tools, `--tools default` every tool. */
export function toolsFlag(values: string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const names = splitToolList(values);
  return names.length === 1 && names[0] === 'default' ? undefined : names;
}

/** The config values Claude Code's flags set, and how to name each in errors. */
export function claudeValues(options: CommandLine, values: Record<string, unknown>, labels: Record<string, string>): void {
  if (options.dangerouslySkipPermissions) {
    values.permissionMode = 'bypassPermissions';
    labels.permissionMode = '--dangerously-skip-permissions';
  }
  // The permissions plugin parses rules fully; this catches a malformed one here, where the flag can be named.
  for (const [flag, rules] of [['--allowedTools', options.allowedTools], ['--disallowedTools', options.disallowedTools]] as const) {
    const bad = rules?.find((rule) => !/^[A-Za-z0-9_*-]+(?:\(.*\S.*\))?$/s.test(rule));
    if (bad) throw new KeelError(`${flag}: invalid permission rule "${bad}" (expected ToolName or ToolName(specifier), e.g. Bash(npm test))`, { exitCode: 2 });
  }
  if (options.allowedTools?.length || options.disallowedTools?.length) {
    values.permissions = { allow: options.allowedTools ?? [], deny: options.disallowedTools ?? [] };
    labels.permissions = '--allowedTools/--disallowedTools';
  }
  const more = { tools: '--tools', systemPrompt: '--system-prompt', appendSystemPrompt: '--append-system-prompt' } as const;
  for (const [key, label] of Object.entries(more) as Array<[keyof typeof more, string]>) {
    if (options[key] !== undefined) {
      values[key] = options[key];
      labels[key] = label;
    }
  }
  const headless = {
    agents: '--agents',
    jsonSchema: '--json-schema',
    maxBudgetUsd: '--max-budget-usd',
    fallbackModel: '--fallback-model',
    goal: '--goal',
    goalCheck: '--goal-check',
  } as const;
  for (const [key, label] of Object.entries(headless) as Array<[keyof typeof headless, string]>) {
    if (options[key] !== undefined) {
      values[key] = options[key];
      labels[key] = label;
    }
  }
  if (options.goalCheck !== undefined && options.goal === undefined) throw new KeelError('--goal-check: needs --goal <condition>', { exitCode: 2 });
  if (options.addDir?.length) {
    values.additionalDirectories = options.addDir.map((dir) => path.resolve(dir));
    labels.additionalDirectories = '--add-dir';
  }
}
