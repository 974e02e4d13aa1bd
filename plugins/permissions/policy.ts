/**
 * The decision for one validated tool call. Order: shell guard → deny rules → always-asked paths → ask rules →
 * allow rules → writes outside the project → session allowances → the mode × level matrix.
 */
import path from 'node:path';
import type { Decision, PermissionLevel, PermissionMode, ToolCall, ToolDefinition } from '../../kernel/index.js';
import { catastrophic } from './guard.js';
import { expandHome, isInside, isSavedOutput, protectedReason, resolveReal, type PathContext } from './paths.js';
import { isBare, pathPatternMatches, shellPatternMatches, toolMatches, urlPatternMatches, type Rule } from './rules.js';
import { analyzeShell, unwrapCommand, type SimpleCommand } from './shell.js';

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
  return deny(`${call.name} is a ${tool.permission} tool and plan mode runs only read-level tools. Finish exploring, then call exit_plan_mode with your plan so the user can approve it.`);
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
}

export interface Verdict {
  decision: Decision;
  /** The resolved paths the call touches, to re-check right before it runs. */
  resolved: string[];
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

export async function evaluate(call: ToolCall, tool: ToolDefinition, ctx: PolicyContext): Promise<Verdict> {
  const rules = ctx.rules.filter((rule) => toolMatches(rule, call.name));
  const bareDeny = rules.find((r) => r.kind === 'deny' && isBare(r));
  if (bareDeny) return { decision: deny(`${call.name} is denied by the rule "${bareDeny.text}"`), resolved: [] };
  const planned = planRefusal(call, tool, ctx.mode);
  if (planned) return { decision: planned, resolved: [] };
  if (tool.name === 'bash') return { decision: await evaluateShell(call, tool, rules, ctx), resolved: [] };

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
  for (const p of resolved) {
    const why = protectedReason(p, access, ctx);
    if (why) return { decision: ask(`${call.name} needs approval: ${why}`), resolved };
  }
  const asked = rules.find((r) => r.kind === 'ask' && (isBare(r) || specMatches(r)));
  if (asked) return { decision: ask(`${call.name} matches the ask rule "${asked.text}"`), resolved };

  const allowRule = url !== undefined ? rules.find((r) => r.kind === 'allow' && specMatches(r)) : undefined;
  if (allowRule) return { decision: allow(`rule "${allowRule.text}"`), resolved };
  if (resolved.length > 0 && resolved.every(specCovers)) return { decision: allow('allow rule'), resolved };

  if (ctx.mode !== 'auto') {
    const outside = resolved.find((p) => !isInside(p, ctx.root) && !(access === 'read' && isSavedOutput(p, ctx.keelHome)));
    if (outside) return { decision: ask(`${call.name} touches ${outside}, outside the project ${ctx.root}`), resolved };
  }
  const bareAllow = rules.find((r) => r.kind === 'allow' && isBare(r));
  if (bareAllow) return { decision: allow(`rule "${bareAllow.text}"`), resolved };
  if (ctx.sessionAllowed) return { decision: allow('allowed for this session'), resolved };
  return { decision: matrix(call.name, tool.permission, ctx.mode), resolved };
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

/** The words of a command as one string; a word computed at run time shows as `…`. */
function commandText(argv: Array<string | null>): string {
  return argv.map((w) => w ?? '…').join(' ');
}

const HARMLESS_TARGET = /^(\/dev\/null|\/dev\/stdout|\/dev\/stderr|-|\d+)$/;

function writesTo(cmd: SimpleCommand): Array<string | null> {
  return cmd.redirects.filter((r) => r.op.includes('>') && !(r.target !== null && HARMLESS_TARGET.test(r.target))).map((r) => r.target);
}

async function evaluateShell(call: ToolCall, tool: ToolDefinition, rules: Rule[], ctx: PolicyContext): Promise<Decision> {
  const input = call.input as { command?: unknown };
  const command = typeof input?.command === 'string' ? input.command : '';
  const analysis = await analyzeShell(command);
  const blocked = catastrophic(command, analysis);
  if (blocked) return deny(`this command ${blocked}; the shell guard always blocks it`);

  const denyRules = rules.filter((r) => r.kind === 'deny' && r.specifier !== undefined);
  const matchesAny = (list: Rule[], cmd: SimpleCommand) =>
    list.find((r) => [commandText(cmd.argv), commandText(unwrapCommand(cmd.argv))].some((text) => shellPatternMatches(r.specifier!, text)));
  if (!analysis.ok) {
    const raw = command.trim();
    const denied = denyRules.find((r) => shellPatternMatches(r.specifier!, raw));
    if (denied) return deny(`the command is denied by the rule "${denied.text}"`);
    return ask(`the command could not be parsed (${analysis.error}), so it needs the user's approval`);
  }
  for (const cmd of analysis.commands) {
    const denied = matchesAny(denyRules, cmd);
    if (denied) return deny(`"${cmd.text}" is denied by the rule "${denied.text}"`);
  }
  if (denyRules.length > 0) {
    const hidden = analysis.commands.find((cmd) => cmd.opaque === undefined && unwrapCommand(cmd.argv)[0] === null);
    if (hidden) return ask(`"${hidden.text}" runs a command known only at run time, so the deny rules cannot vouch for it`);
  }
  for (const cmd of analysis.commands) {
    for (const target of writesTo(cmd)) {
      if (target === null) continue;
      const [resolved] = resolvePaths([target], ctx);
      const why = protectedReason(resolved, 'write', ctx);
      if (why) return ask(`"${cmd.text}" writes to a protected path: ${why}`);
    }
  }
  const askRule = rules.find((r) => r.kind === 'ask' && (isBare(r) || analysis.commands.some((cmd) => matchesAny([r], cmd))));
  if (askRule) return ask(`the command matches the ask rule "${askRule.text}"`);

  const bareAllow = rules.find((r) => r.kind === 'allow' && isBare(r));
  if (bareAllow) return allow(`rule "${bareAllow.text}"`);
  const allowRules = rules.filter((r) => r.kind === 'allow' && r.specifier !== undefined);
  if (allowRules.length > 0 && analysis.commands.length > 0 && analysis.commands.every((cmd) => covered(cmd, allowRules, ctx))) {
    return allow('every command is allowed by a rule');
  }
  if (ctx.sessionAllowed) return allow('allowed for this session');
  if (MATRIX[ctx.mode].execute === 'allow') return allow();
  const first = analysis.commands.find((cmd) => !covered(cmd, allowRules, ctx));
  return ask(first && analysis.commands.length > 1 ? `"${first.text}" is not allowed by a rule (mode ${ctx.mode})` : `bash is an execute tool and the permission mode is ${ctx.mode}`);
}

/** A simple command an allow rule vouches for: fixed words, no assignments, no writes to files. */
function covered(cmd: SimpleCommand, allowRules: Rule[], ctx: PolicyContext): boolean {
  if (cmd.opaque !== undefined || cmd.assigns.length > 0) return false;
  if (cmd.argv.length === 0 || cmd.argv.some((w) => w === null)) return false;
  if (writesTo(cmd).length > 0) return false;
  const words = cmd.argv as string[];
  // `cd` into the project needs no rule: it changes nothing.
  if (words[0] === 'cd' && words.length === 2 && !words[1].startsWith('-')) {
    const [target] = resolvePaths([words[1]], ctx);
    if (isInside(target, ctx.root)) return true;
  }
  const text = words.join(' ');
  return allowRules.some((r) => shellPatternMatches(r.specifier!, text));
}
