/**
 * The decision for one validated tool call. Order: deny rules → always-asked paths → ask rules → allow rules →
 * paths outside the project → session allowances → the mode × level matrix. Bash calls are judged in
 * shell-policy.ts (the shell guard first, then the same order on what the command really touches).
 */
import path from 'node:path';
import type { Decision, PermissionLevel, PermissionMode, ToolCall, ToolDefinition } from '../../kernel/index.js';
import { settingsChange } from './front-matter.js';
import { expandHome, hardLinks, isInside, isSavedOutput, protectedMatch, protectedReason, protectedTwin, resolveReal, type PathContext } from './paths.js';
import { isBare, pathPatternMatches, toolMatches, urlPatternMatches, type Rule } from './rules.js';
import { evaluateShell } from './shell-policy.js';

/** What each mode does with each level when no rule decides. */
export const MATRIX: Record<PermissionMode, Record<PermissionLevel, 'allow' | 'ask' | 'deny'>> = {
  auto: { read: 'allow', write: 'allow', execute: 'allow', network: 'allow' },
  edits: { read: 'allow', write: 'allow', execute: 'ask', network: 'ask' },
  ask: { read: 'allow', write: 'ask', execute: 'ask', network: 'ask' },
  manual: { read: 'ask', write: 'ask', execute: 'ask', network: 'ask' },
  plan: { read: 'allow', write: 'deny', execute: 'deny', network: 'deny' },
};

/** Plan mode refuses every tool above read level, whatever the rules say: nothing changes until a plan is approved. */
function planRefusal(call: ToolCall, tool: ToolDefinition, mode: PermissionMode): Decision | undefined {
  if (MATRIX[mode][tool.permission] !== 'deny') return undefined;
  return deny(`${call.name} is ${tool.permission === 'execute' ? 'an' : 'a'} ${tool.permission} tool and plan mode runs only read-level tools. Finish exploring, then call exit_plan_mode with your plan so the user can approve it.`);
}

/** Built-in tools whose input names a path even when they do not declare `paths`. */
const FS_TOOLS = new Set(['read_file', 'write_file', 'edit_file', 'glob', 'grep', 'ls']);

export interface PolicyContext extends PathContext {
  rules: Rule[];
  mode: PermissionMode;
  /** The directory relative paths resolve against (the shell's for bash). */
  cwd: string;
  /** The user chose "Allow this session" for this tool. */
  sessionAllowed: boolean;
  /** More roots that count as inside the project (`--add-dir`, config `additionalDirectories`), resolved. */
  extraRoots?: string[];
  /** Folders read-level tools may read in this session (a skill's bundled files), resolved. */
  readableRoots?: string[];
}

export interface Verdict {
  decision: Decision;
  /** The resolved paths the call touches, to re-check right before it runs. */
  resolved: string[];
  /**
   * Instruction files this write was let through for without asking because it leaves their front matter as it
   * is: re-checked right before the call runs, since an earlier call of the same response may change the file.
   */
  bodyOnly?: string[];
}

const deny = (reason: string): Decision => ({ behavior: 'deny', reason: `Permission denied: ${reason}` });
const ask = (reason: string): Decision => ({ behavior: 'ask', reason });
const allow = (reason?: string): Decision => (reason ? { behavior: 'allow', reason } : { behavior: 'allow' });

/** The paths a call touches, as the tool reports them (or its `path` field for the built-in file tools). */
export function touchedPaths(tool: ToolDefinition, input: unknown): string[] {
  if (tool.paths) return tool.paths(input).filter((p) => typeof p === 'string' && p.length > 0);
  if (FS_TOOLS.has(tool.name) && typeof input === 'object' && input !== null) {
    const value = (input as Record<string, unknown>).path ?? (input as Record<string, unknown>).file_path;
    return typeof value === 'string' && value ? [value] : [];
  }
  return [];
}

export function resolvePaths(raw: string[], ctx: { cwd: string; home: string }): string[] {
  return raw.map((p) => resolveReal(path.resolve(ctx.cwd, expandHome(p, ctx.home))));
}

/**
 * Tools that read, and tools that write, the same files: a path deny or ask rule on one holds for the others
 * (`Edit(secrets/**)` also stops `write_file secrets/x`, as Claude Code's Edit rules cover every editing tool).
 */
const PATH_FAMILIES = [['read_file', 'grep', 'glob', 'ls'], ['write_file', 'edit_file', 'notebook_edit']];

function ruleApplies(rule: Rule, toolName: string): boolean {
  if (toolMatches(rule, toolName)) return true;
  if (rule.kind === 'allow' || rule.specifier === undefined) return false;
  const family = PATH_FAMILIES.find((f) => f.includes(toolName));
  return family !== undefined && family.some((t) => t !== toolName && toolMatches(rule, t));
}

export async function evaluate(call: ToolCall, tool: ToolDefinition, ctx: PolicyContext): Promise<Verdict> {
  const rules = ctx.rules.filter((rule) => ruleApplies(rule, call.name));
  const bareDeny = rules.find((r) => r.kind === 'deny' && isBare(r));
  if (bareDeny) return { decision: deny(`${call.name} is denied by the rule "${bareDeny.text}"`), resolved: [] };
  const planned = planRefusal(call, tool, ctx.mode);
  if (planned) return { decision: planned, resolved: [] };
  if (tool.name === 'bash') return evaluateShell(call, rules, ctx, MATRIX[ctx.mode].execute === 'allow' ? 'allow' : 'ask');

  const resolved = resolvePaths(touchedPaths(tool, call.input), ctx);
  const url = urlOf(call.input);
  const specMatches = (rule: Rule): boolean => {
    if (!rule.specifier) return false;
    if (url !== undefined) return urlPatternMatches(rule.specifier, url);
    return resolved.some((p) => pathPatternMatches(rule.specifier!, p, ctx));
  };
  const specCovers = (p: string) => rules.some((r) => r.kind === 'allow' && r.specifier !== undefined && pathPatternMatches(r.specifier, p, ctx));

  const denied = rules.find((r) => r.kind === 'deny' && specMatches(r));
  if (denied) return { decision: deny(`${call.name} is denied by the rule "${denied.text}"`), resolved };

  const access = tool.permission === 'read' ? 'read' : 'write';
  const bodyOnly: string[] = [];
  for (const p of resolved) {
    const hit = protectedMatch(p, access, ctx);
    if (!hit) continue;
    const change = hit.entry.frontMatter ? await settingsChange(call.name, call.input, p) : undefined;
    if (hit.entry.frontMatter && change === undefined) {
      bodyOnly.push(p);
      continue;
    }
    const what = change ? `${hit.reason}, and this call would ${change}` : hit.reason;
    return { decision: ask(`${call.name} needs approval: ${what}`), resolved };
  }
  // A hard link's other names may be anywhere: writing one changes a file outside the project, in every mode.
  const linked = resolved.map((p) => [p, hardLinks(p)] as const).find(([, n]) => n > 1);
  if (linked && access === 'write') {
    return { decision: ask(`${call.name} needs approval: ${linked[0]} has ${linked[1]} hard links, so the write would also change a file elsewhere`), resolved };
  }
  if (linked && ctx.mode !== 'auto') {
    return { decision: ask(`${call.name} reads ${linked[0]}, which has ${linked[1]} hard links and may be a file outside the project ${ctx.root}`), resolved };
  }
  // Even auto mode asks before reading a secret under another name.
  const twin = linked && protectedTwin(linked[0], ctx);
  if (twin) return { decision: ask(`${call.name} needs approval: ${linked[0]} is a hard link to ${twin}, which is protected for reads`), resolved };
  const done = (decision: Decision): Verdict => (bodyOnly.length > 0 ? { decision, resolved, bodyOnly } : { decision, resolved });

  const asked = rules.find((r) => r.kind === 'ask' && (isBare(r) || specMatches(r)));
  if (asked) return done(ask(`${call.name} matches the ask rule "${asked.text}"`));

  const allowRule = url !== undefined ? rules.find((r) => r.kind === 'allow' && specMatches(r)) : undefined;
  if (allowRule) return done(allow(`rule "${allowRule.text}"`));
  if (resolved.length > 0 && resolved.every(specCovers)) return done(allow('allow rule'));

  if (ctx.mode !== 'auto') {
    const inRoots = (p: string) => isInside(p, ctx.root) || (ctx.extraRoots ?? []).some((root) => isInside(p, root));
    const readable = (p: string) => access === 'read' && (isSavedOutput(p, ctx) || (ctx.readableRoots ?? []).some((root) => isInside(p, root)));
    const outside = resolved.find((p) => !inRoots(p) && !readable(p));
    if (outside) return done(ask(`${call.name} touches ${outside}, outside the project ${ctx.root}`));
  }
  const bareAllow = rules.find((r) => r.kind === 'allow' && isBare(r));
  if (bareAllow) return done(allow(`rule "${bareAllow.text}"`));
  if (ctx.sessionAllowed) return done(allow('allowed for this session'));
  return done(matrix(call.name, tool.permission, ctx.mode));
}

function matrix(name: string, level: PermissionLevel, mode: PermissionMode): Decision {
  if (MATRIX[mode][level] === 'allow') return allow();
  if (MATRIX[mode][level] === 'deny') return deny(`${name} is a ${level} tool and the permission mode is ${mode}`);
  return ask(`${name} is a ${level} tool and the permission mode is ${mode}`);
}

function urlOf(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const url = (input as Record<string, unknown>).url;
  return typeof url === 'string' ? url : undefined;
}
