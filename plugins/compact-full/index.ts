import path from 'node:path';
import { definePlugin, errorMessage, Stage, type ContentBlockParam, type Kernel, type MessageParam, type Session } from '../../kernel/index.js';
import { fileBlocks, todoBlock, toolsBlock } from './reinject.js';

export interface FullCompactOptions {
  /** How many recently read files are re-injected (default 5), newest first. */
  maxFiles?: number;
  /** Cap on each re-injected file, in tokens (default 5 000). */
  maxFileTokens?: number;
}

export interface FullCompactionService {
  /** Summarises the whole history and re-injects recent files, todos and tools. False when it failed. */
  compact(session: Session, opts?: { instructions?: string; signal?: AbortSignal }): Promise<boolean>;
}

declare module '../../kernel/types.js' {
  interface Services {
    'full-compaction': FullCompactionService;
  }
}

/** The parts of other plugins' services this plugin uses. */
interface Summarizer {
  summarize(session: Session, messages: readonly MessageParam[], opts?: { instructions?: string; signal?: AbortSignal }): Promise<string>;
  head(summary: string, older: readonly MessageParam[], intro: string): ContentBlockParam[];
}
interface Budget {
  used(session: Session): number;
  publish(session: Session): unknown;
}

const NAME = 'compact-full';

interface FullData {
  /** Absolute paths read with read_file, oldest first. */
  reads: string[];
  tools: string[];
  lastError?: string;
}

function data(session: Session): FullData {
  let value = session.data.get(NAME) as FullData | undefined;
  if (!value) {
    value = { reads: [], tools: [] };
    session.data.set(NAME, value);
  }
  return value;
}

/** `/compact [instructions]`: compacts the whole history, then re-injects recent files, todos and tools. */
export default definePlugin((opts: FullCompactOptions = {}) => ({
  name: NAME,
  kernel: '^1.0.0',
  dependencies: ['context-budget', 'compact-auto'],
  apply(kernel) {
    const limits = { maxFiles: opts.maxFiles ?? 5, maxFileTokens: opts.maxFileTokens ?? 5000 };

    // Watches results pass (unchanged) to learn which files were read and which tools are in use.
    kernel.hooks.toolResult.tapPromise({ name: NAME, stage: Stage.LAST }, async (result, call, turn) => {
      const d = data(turn.session);
      if (!d.tools.includes(call.name)) d.tools.push(call.name);
      const input = call.input as { path?: unknown } | null;
      if (call.name === 'read_file' && !result.isError && input && typeof input.path === 'string') {
        const file = path.resolve(turn.session.cwd, input.path);
        d.reads = [...d.reads.filter((p) => p !== file), file];
      }
      return result;
    });

    const service: FullCompactionService = {
      compact: (session, o = {}) => fullCompact(kernel, session, o, limits),
    };
    kernel.services.provide('full-compaction', service);

    kernel.commands.register({
      name: 'compact',
      description: 'summarise the whole conversation to free context (optional: instructions for the summary)',
      async run(args, ctx) {
        if (ctx.session.messages.length === 0) return 'Nothing to compact yet.';
        const budget = kernel.services.get('budget') as Budget | undefined;
        const before = budget?.used(ctx.session);
        const ok = await service.compact(ctx.session, { instructions: args, signal: ctx.signal });
        if (!ok) return `Compaction failed: ${data(ctx.session).lastError ?? 'unknown error'}. The conversation is unchanged.`;
        const after = budget?.used(ctx.session);
        return before !== undefined && after !== undefined ? `Compacted the conversation: ${before} → ${after} tokens.` : 'Compacted the conversation.';
      },
    });
  },
}));

async function fullCompact(
  kernel: Kernel,
  session: Session,
  opts: { instructions?: string; signal?: AbortSignal },
  limits: { maxFiles: number; maxFileTokens: number },
): Promise<boolean> {
  const d = data(session);
  const messages = session.messages;
  if (messages.length === 0) return false;
  kernel.emit({ type: 'compact_start', session, trigger: 'manual', instructions: opts.instructions });
  const summarizer = kernel.services.require('summarizer', NAME) as Summarizer;
  const budget = kernel.services.get('budget') as Budget | undefined;
  // An assistant message whose tool calls are not answered yet stays, so its results still have a home.
  const last = messages[messages.length - 1]!;
  const pending = last.role === 'assistant' && Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_use');
  const older = pending ? messages.slice(0, -1) : messages.slice();
  if (older.length === 0) return false;
  const preTokens = budget?.used(session) ?? 0;
  let summary: string;
  try {
    summary = await summarizer.summarize(session, older, { instructions: opts.instructions, signal: opts.signal });
  } catch (err) {
    d.lastError = errorMessage(err);
    kernel.log('warn', `full compaction failed: ${d.lastError}`, NAME);
    return false;
  }
  const [summaryBlock, ...request] = summarizer.head(summary, older, 'that was compacted. Summary of everything so far');
  const head: ContentBlockParam[] = [summaryBlock!, ...(await fileBlocks([...d.reads].reverse(), limits.maxFiles, limits.maxFileTokens)), ...request];
  const todos = todoBlock(kernel.state.get().todos ?? []);
  if (todos) head.push(todos);
  const tools = toolsBlock(d.tools);
  if (tools) head.push(tools);
  const rewritten: MessageParam[] = [{ role: 'user', content: head }, ...(pending ? [last] : [])];
  messages.splice(0, messages.length, ...rewritten);
  kernel.state.set({ messages: messages.slice() });
  budget?.publish(session);
  kernel.emit({ type: 'compact', trigger: 'manual', preTokens, postTokens: budget?.used(session) ?? 0, tier: NAME });
  return true;
}
