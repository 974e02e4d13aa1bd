/**
 * A request that names a slash command (`/compact keep the API notes`) runs the command instead of a model turn;
 * every frontend that takes requests as text (headless, SDK) goes through here.
 */
import { userMessage } from './errors.js';
import type { Kernel } from './kernel.js';
import { emptyUsage } from './loop.js';
import type { CommandDefinition, RunResult, Session } from './types.js';

export interface SlashCall {
  command: CommandDefinition;
  args: string;
}

/**
 * The command a request names (`/name`, or `/folder:name` for a namespaced one), waiting for commands plugins attach late (an MCP server's prompts). Anything
 * else — including text that merely starts with a path like `/usr/bin …` — is not a command.
 */
export async function findSlashCommand(kernel: Kernel, request: string): Promise<SlashCall | undefined> {
  const match = /^\/([a-z][\w-]*(?::[\w-]+)*)(?:\s+([\s\S]*))?$/.exec(request.trim());
  if (!match) return undefined;
  const command = await kernel.commands.settle(match[1]!);
  return command ? { command, args: (match[2] ?? '').trim() } : undefined;
}

/** Runs the command; what it prints and returns is the result, a throw is an error result naming the command. */
export async function runSlashCommand(kernel: Kernel, session: Session, call: SlashCall, signal: AbortSignal): Promise<RunResult> {
  const started = Date.now();
  const printed: string[] = [];
  const print = (text: string) => printed.push(text.endsWith('\n') ? text : `${text}\n`);
  const done = (result: string, error?: string): RunResult => ({
    subtype: error ? 'error_during_execution' : 'success',
    isError: Boolean(error),
    result,
    ...(error ? { error } : {}),
    stopReason: null,
    numTurns: 0,
    durationMs: Date.now() - started,
    durationApiMs: 0,
    usage: emptyUsage(),
    costUsd: 0,
    permissionDenials: [],
  });
  try {
    const returned = await call.command.run(call.args, { kernel, session, print, signal });
    return done((printed.join('') + (typeof returned === 'string' ? returned : '')).trimEnd());
  } catch (err) {
    const message = userMessage(err);
    const prefix = `/${call.command.name}`;
    return done('', message.startsWith(prefix) ? message : `${prefix}: ${message}`);
  }
}
