/** The two ways `query()` reaches a Keel: a kernel in this process, or the `keel` CLI as a child. */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage, startSession, type protocol } from '../kernel/index.js';
import { ProtocolDriver, type Incoming } from '../plugins/sdk/driver.js';
import { readLines } from '../plugins/sdk/lines.js';
type OutMessage = protocol.OutMessage;
import { buildKernel } from './kernel.js';
import { AsyncQueue } from './queue.js';
import type { QueryOptions } from './types.js';

export interface Transport {
  /** Sends one message; returns how Keel names it in errors (`message 3`, `stdin line 3`). */
  send(message: unknown): string;
  /** No more input: Keel finishes what it was given, then its messages end. */
  end(): void;
  messages: AsyncIterable<OutMessage>;
  /** Stops at once. */
  abort(): void;
}

export async function inProcessTransport(options: QueryOptions): Promise<Transport> {
  const env = options.env ?? process.env;
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const kernel = await buildKernel(options, cwd, env);
  const input = new AsyncQueue<Incoming>();
  const output = new AsyncQueue<OutMessage>();
  const controller = new AbortController();
  const resume = options.resume !== undefined || options.continue ? { id: options.resume, latest: Boolean(options.continue) } : undefined;
  const driver = new ProtocolDriver({
    kernel,
    input,
    write: (message) => output.push(message),
    startSession: (overrides) => startSession(kernel, { cwd, resume, ...(options.sessionId && !resume ? { id: options.sessionId } : {}), ...overrides }),
    signal: controller.signal,
    maxTurns: options.maxTurns,
    askHost: true,
    partial: Boolean(options.includePartialMessages),
    once: false,
    slashCommands: true,
  });
  driver.run().then(
    () => output.end(),
    (err: unknown) => output.fail(err instanceof Error ? err : new Error(errorMessage(err))),
  );
  let count = 0;
  return {
    send(message) {
      const where = `message ${++count}`;
      input.push({ where, value: message });
      return where;
    },
    end: () => input.end(),
    messages: output,
    abort: () => {
      controller.abort(new Error('aborted by the host'));
      input.end();
    },
  };
}

/** This package's `bin/keel.js`, found from this module's place (sources or dist/). */
function defaultExecutable(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const bin = path.join(dir, 'bin', 'keel.js');
    if (existsSync(bin) && existsSync(path.join(dir, 'package.json'))) return bin;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('query(): cannot find bin/keel.js; pass options.executable');
    dir = parent;
  }
}

export function cliArgs(options: QueryOptions): string[] {
  const args = ['--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--permission-prompt-tool', 'stdio'];
  const add = (flag: string, value: string | number | undefined) => {
    if (value !== undefined) args.push(`${flag}=${value}`);
  };
  add('--model', options.model);
  add('--permission-mode', options.permissionMode);
  add('--max-turns', options.maxTurns);
  add('--max-budget-usd', options.maxBudgetUsd);
  add('--fallback-model', options.fallbackModel);
  if (options.outputFormat) add('--json-schema', JSON.stringify(options.outputFormat.schema));
  add('--session-id', options.sessionId);
  add('--resume', options.resume);
  if (options.continue) args.push('--continue');
  if (options.allowedTools?.length) add('--allowedTools', options.allowedTools.join(','));
  if (options.disallowedTools?.length) add('--disallowedTools', options.disallowedTools.join(','));
  if (options.tools) add('--tools', options.tools.join(','));
  if (options.includePartialMessages) args.push('--include-partial-messages');
  if (typeof options.preset === 'string') add('--preset', options.preset);
  return args;
}

/**
 * How this Node starts `bin/keel.js` (after Node's path): as the launcher's shell lines would, from the build's
 * start-up snapshot when this is the Node that made it (not upgraded since) and `env` sets neither NODE_OPTIONS
 * nor KEEL_NO_SNAPSHOT, with the V8 flags the snapshot and code caches were made under; else the script alone.
 */
export function launchArgs(bin: string, env: NodeJS.ProcessEnv, node = process.execPath): string[] {
  const blob = path.join(path.dirname(bin), '..', 'dist', 'bin', 'keel.blob');
  try {
    const noted = JSON.parse(readFileSync(`${blob}.flags.json`, 'utf8')) as unknown;
    // `{ node, snapshot }`: the flags of both paths, and those only the snapshot's path adds (scripts/node-flags.mjs).
    const { node: flags, snapshot } = (noted ?? {}) as { node?: unknown; snapshot?: unknown };
    if (!areFlags(flags) || !areFlags(snapshot)) return [bin];
    const maker = readFileSync(`${blob}.node`, 'utf8').split('\n')[0];
    const real = realpathSync(node);
    const usable = !env.NODE_OPTIONS && !env.KEEL_NO_SNAPSHOT && maker === real && statSync(real).mtimeMs <= statSync(blob).mtimeMs;
    return usable ? [...flags, ...snapshot, '--snapshot-blob', blob, bin] : [...flags, bin];
  } catch {
    return [bin];
  }
}

function areFlags(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((f) => typeof f === 'string' && f.startsWith('--'));
}

export function processTransport(options: QueryOptions): Transport {
  const env = options.env ?? process.env;
  const args = options.executable ? [options.executable] : launchArgs(defaultExecutable(), env);
  const child = spawn(process.execPath, [...args, ...cliArgs(options)], {
    cwd: options.cwd ?? process.cwd(),
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
    options.stderr?.(chunk);
  });
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  async function* messages(): AsyncGenerator<OutMessage> {
    // Exit 1 after a failed turn's result only repeats what that result says: the query ends as in-process.
    let lastFailedResult = false;
    for await (const item of readLines(child.stdout, 'keel stdout')) {
      if ('error' in item) throw new Error(`${item.where}: ${item.error}`);
      const message = item.value as OutMessage;
      if (message.type === 'result' && !message.parent_tool_use_id) lastFailedResult = message.is_error === true;
      yield message;
    }
    const code = await exited;
    if (code === 1 && lastFailedResult) return;
    if (code !== 0 && code !== null) throw new Error(`keel exited with code ${code}: ${stderr.trim().split('\n').pop() ?? ''}`);
  }
  let lines = 0;
  return {
    send(message) {
      child.stdin.write(`${JSON.stringify(message)}\n`);
      return `stdin line ${++lines}`;
    },
    end: () => child.stdin.end(),
    messages: messages(),
    abort: () => {
      child.kill('SIGTERM');
    },
  };
}
