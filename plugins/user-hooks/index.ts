import { spawnSync } from 'node:child_process';
import {
  definePlugin,
  Stage,
  type ContentBlock,
  type Decision,
  type MessageParam,
  type Session,
  type TextBlockParam,
  type ToolResult,
} from '../../kernel/index.js';
import { hooksListing } from './list.js';
import { claudeAlias, compile, hooksSchema, type CompiledMatcher, type HookEvent, type HooksConfig } from './config.js';
import { runHook, type HookRun } from './run.js';

const NAME = 'user-hooks';
const DEFAULT_TIMEOUT_S = 60;
/** A run continues at most this many times because Stop hooks objected. */
const MAX_STOP_CONTINUATIONS = 5;

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** Shell commands run on agent events, in Claude Code's format (see the README's User hooks section). */
    hooks?: HooksConfig;
  }
}

interface SessionHooks {
  /** Context SessionStart hooks added, for every request of the session. */
  sessionContext: string[];
  /** Context UserPromptSubmit hooks added for the current prompt. */
  promptContext: string[];
  /** Times the current run went on because a Stop hook objected. */
  continuations: number;
}

interface Outcome {
  /** Exit 2, `decision: "block"` or `continue: false`: the event is refused, with this reason. */
  blocked?: string;
  /** `permissionDecision` of a PreToolUse hook. */
  permission?: 'allow' | 'deny' | 'ask';
  reason?: string;
  context: string[];
}

function stateOf(session: Session): SessionHooks {
  let state = session.data.get(NAME) as SessionHooks | undefined;
  if (!state) {
    state = { sessionContext: [], promptContext: [], continuations: 0 };
    session.data.set(NAME, state);
  }
  return state;
}

/** Reads what the hooks said, in Claude Code's terms: exit codes first, then JSON output. */
function outcomeOf(runs: HookRun[], event: HookEvent, log: (message: string) => void, contextFromText: boolean): Outcome {
  const outcome: Outcome = { context: [] };
  for (const run of runs) {
    if (run.timedOut) {
      log(`${event} hook "${run.command}" timed out and was stopped`);
      continue;
    }
    if (run.code === 2) {
      outcome.blocked ??= run.stderr || `blocked by the ${event} hook "${run.command}"`;
      continue;
    }
    if (run.code !== 0) {
      log(`${event} hook "${run.command}" failed (exit ${run.code ?? 'signal'})${run.stderr ? `: ${run.stderr.split('\n')[0]}` : ''}`);
      continue;
    }
    const json = run.json;
    if (!json) {
      if (contextFromText && run.stdout.trim()) outcome.context.push(run.stdout.trim());
      continue;
    }
    const specific = (json.hookSpecificOutput ?? {}) as Record<string, unknown>;
    if (json.continue === false) outcome.blocked ??= typeof json.stopReason === 'string' ? json.stopReason : `stopped by the ${event} hook "${run.command}"`;
    if (json.decision === 'block') outcome.blocked ??= typeof json.reason === 'string' ? json.reason : `blocked by the ${event} hook "${run.command}"`;
    const decision = specific.permissionDecision;
    if (decision === 'deny' || decision === 'ask' || decision === 'allow') {
      // The strictest answer of all the hooks wins.
      const rank = { allow: 0, ask: 1, deny: 2 } as const;
      if (!outcome.permission || rank[decision] > rank[outcome.permission]) {
        outcome.permission = decision;
        outcome.reason = typeof specific.permissionDecisionReason === 'string' ? specific.permissionDecisionReason : undefined;
      }
    }
    if (typeof specific.additionalContext === 'string' && specific.additionalContext.trim()) outcome.context.push(specific.additionalContext.trim());
  }
  return outcome;
}

function promptText(message: MessageParam | undefined): string | undefined {
  if (!message || message.role !== 'user') return undefined;
  if (typeof message.content === 'string') return message.content;
  const texts = message.content.filter((b): b is TextBlockParam => b.type === 'text').map((b) => b.text);
  return texts.length > 0 && texts.length === message.content.length ? texts.join('\n') : undefined;
}

function resultText(result: ToolResult): string {
  return typeof result.content === 'string' ? result.content : result.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n');
}

/**
 * User hooks: shell commands run on agent events, configured like Claude Code's (`PreToolUse`, `PostToolUse`,
 * `UserPromptSubmit`, `Stop`, `SubagentStop`, `SessionStart`, `SessionEnd`, `PreCompact`, `Notification`).
 * The event arrives as JSON on stdin; exit 2 blocks with stderr fed back; JSON on stdout may deny, ask or add
 * context. Hooks can make Keel stricter, never looser: a hook's `allow` leaves the decision to the policy.
 */
export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { hooks: hooksSchema },
  apply(kernel) {
    const config = kernel.config.hooks as HooksConfig | undefined;
    kernel.commands.register({
      name: 'hooks',
      description: 'list the user hooks in force (PreToolUse, Stop, …) and the settings file each comes from',
      run: async () => hooksListing(config, kernel.config.sources.hooks, kernel.config.untrustedFiles ?? []),
    });
    if (!config || Object.keys(config).length === 0) return;
    const matchers = compile(config);
    const log = (message: string) => kernel.log('warn', message, NAME);
    const subagent = process.env.KEEL_SUBAGENT_MODE === '1';

    const payloadFor = (session: Session, event: HookEvent): Record<string, unknown> => {
      const store = kernel.services.get('session-store') as { fileOf?: (s: Session) => string | undefined } | undefined;
      return {
        session_id: session.id,
        transcript_path: store?.fileOf?.(session) ?? null,
        cwd: session.cwd,
        permission_mode: session.permissionMode,
        hook_event_name: event,
      };
    };
    const envFor = (session: Session): NodeJS.ProcessEnv => ({ ...process.env, KEEL_PROJECT_DIR: session.projectRoot, CLAUDE_PROJECT_DIR: session.projectRoot });
    const selected = (event: HookEvent, subject?: string, alias?: string): CompiledMatcher['hooks'] =>
      (matchers[event] ?? []).filter((m) => subject === undefined || m.test(subject, alias)).flatMap((m) => m.hooks);

    const run = async (event: HookEvent, session: Session, extra: Record<string, unknown>, opts: { subject?: string; alias?: string; signal?: AbortSignal } = {}): Promise<HookRun[]> => {
      const hooks = selected(event, opts.subject, opts.alias);
      if (hooks.length === 0) return [];
      const input = { ...payloadFor(session, event), ...extra };
      return Promise.all(
        hooks.map((hook) => runHook(hook.command, input, { cwd: session.cwd, env: envFor(session), timeoutMs: (hook.timeout ?? DEFAULT_TIMEOUT_S) * 1000, signal: opts.signal })),
      );
    };

    let lastSession: Session | undefined;
    if (matchers.SessionStart || matchers.SessionEnd) {
      kernel.hooks.sessionStart.tapPromise({ name: NAME, stage: Stage.LATE }, async (session) => {
        lastSession = session;
        const source = session.resumedFrom ? 'resume' : 'startup';
        const outcome = outcomeOf(await run('SessionStart', session, { source }, { subject: source }), 'SessionStart', log, true);
        if (outcome.blocked) log(`SessionStart hook: ${outcome.blocked}`);
        stateOf(session).sessionContext.push(...outcome.context);
      });
    }
    if (matchers.SessionEnd) {
      // Once, when Keel is about to exit on its own (not after a second Ctrl+C, which leaves at once).
      let ended = false;
      process.on('beforeExit', () => {
        if (ended || !lastSession) return;
        ended = true;
        void run('SessionEnd', lastSession, { reason: 'exit' });
      });
    }

    kernel.hooks.contextLoad.tapPromise({ name: NAME, stage: Stage.LATE }, async (context, turn) => {
      const state = stateOf(turn.session);
      if (turn.index === 1 && matchers.UserPromptSubmit) {
        const prompt = promptText(turn.session.messages[turn.session.messages.length - 1]);
        state.promptContext = [];
        state.continuations = 0;
        if (prompt !== undefined) {
          const outcome = outcomeOf(await run('UserPromptSubmit', turn.session, { prompt }, { signal: turn.signal }), 'UserPromptSubmit', log, true);
          if (outcome.blocked) turn.data.set(NAME, { blocked: outcome.blocked });
          state.promptContext = outcome.context;
        }
      } else if (turn.index === 1) state.continuations = 0;
      const sections = [...state.sessionContext, ...state.promptContext];
      if (sections.length === 0) return context;
      const text = `Context from the user's hooks:\n${sections.join('\n\n')}`;
      return { ...context, system: [...context.system, { type: 'text', text, cache_control: null } as unknown as TextBlockParam] };
    });

    // A prompt a UserPromptSubmit hook blocked never reaches the model: this answer ends the run.
    kernel.hooks.query.tapPromise({ name: NAME, stage: Stage.FIRST }, async (request, turn) => {
      const blocked = (turn.data.get(NAME) as { blocked?: string } | undefined)?.blocked;
      if (!blocked || request.tier !== 'main') return undefined;
      const text = `The prompt was blocked by a UserPromptSubmit hook: ${blocked}`;
      turn.emit({ type: 'log', level: 'warn', message: text, source: NAME });
      return {
        model: request.model,
        content: [{ type: 'text', text, citations: null } as ContentBlock],
        stopReason: 'end_turn',
        usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        costUsd: 0,
      };
    });

    if (matchers.PreToolUse) {
      kernel.hooks.prePermission.tapPromise({ name: NAME, stage: Stage.EARLY }, async (call, turn): Promise<Decision | undefined> => {
        const alias = claudeAlias(call.name);
        const input = (call.input ?? {}) as Record<string, unknown>;
        const toolInput = typeof input.path === 'string' && input.file_path === undefined ? { ...input, file_path: input.path } : input;
        const runs = await run('PreToolUse', turn.session, { tool_name: alias ?? call.name, keel_tool_name: call.name, tool_input: toolInput, tool_use_id: call.id }, { subject: call.name, alias, signal: turn.signal });
        const outcome = outcomeOf(runs, 'PreToolUse', log, false);
        if (outcome.blocked) return { behavior: 'deny', reason: `Blocked by a PreToolUse hook: ${outcome.blocked}` };
        if (outcome.permission === 'deny') return { behavior: 'deny', reason: `Denied by a PreToolUse hook${outcome.reason ? `: ${outcome.reason}` : ''}` };
        if (outcome.permission === 'ask') return { behavior: 'ask', reason: `A PreToolUse hook asks for approval${outcome.reason ? `: ${outcome.reason}` : ''}` };
        return undefined;
      });
    }

    if (matchers.PostToolUse) {
      kernel.hooks.toolResult.tapPromise({ name: NAME, stage: Stage.LATE }, async (result, call, turn) => {
        const alias = claudeAlias(call.name);
        const runs = await run(
          'PostToolUse',
          turn.session,
          { tool_name: alias ?? call.name, keel_tool_name: call.name, tool_input: call.input, tool_response: { content: resultText(result), is_error: Boolean(result.isError) }, tool_use_id: call.id },
          { subject: call.name, alias, signal: turn.signal },
        );
        const outcome = outcomeOf(runs, 'PostToolUse', log, false);
        const notes = [...(outcome.blocked ? [`[PostToolUse hook] ${outcome.blocked}`] : []), ...outcome.context.map((c) => `[PostToolUse hook context] ${c}`)];
        if (notes.length === 0) return result;
        const text = `${resultText(result)}\n\n${notes.join('\n')}`;
        return { ...result, content: text };
      });
    }

    const stopEvent: HookEvent = subagent ? 'SubagentStop' : 'Stop';
    if (matchers[stopEvent]) {
      kernel.hooks.postTurn.tapPromise({ name: NAME, stage: Stage.LATE }, async (record, turn) => {
        const stop = record.response.stopReason;
        if (record.toolResults.length > 0 || (stop !== 'end_turn' && stop !== 'stop_sequence')) return;
        const state = stateOf(turn.session);
        const runs = await run(stopEvent, turn.session, { stop_hook_active: state.continuations > 0 }, { signal: turn.signal });
        const outcome = outcomeOf(runs, stopEvent, log, false);
        if (!outcome.blocked) return;
        if (state.continuations >= MAX_STOP_CONTINUATIONS) {
          log(`${stopEvent} hooks asked to go on ${MAX_STOP_CONTINUATIONS} times in a row; the run ends here`);
          return;
        }
        state.continuations++;
        record.followUp = { role: 'user', content: `A ${stopEvent} hook asks you to continue: ${outcome.blocked}` };
      });
    }

    if (matchers.Notification) {
      kernel.hooks.askUser.tapPromise({ name: NAME, stage: Stage.FIRST }, async (question, turn) => {
        const message =
          question.kind === 'permission'
            ? `Keel needs your permission to use ${question.call.name}`
            : question.kind === 'text'
              ? question.prompt
              : `Keel asks: ${question.questions.map((q) => q.question).join(' ')}`;
        await run('Notification', turn.session, { message }, { signal: turn.signal });
        return undefined;
      });
    }

    if (matchers.PreCompact) {
      // Event taps are synchronous: the hooks run to completion (or their timeout) before compaction starts.
      kernel.hooks.event.tap(NAME, (event) => {
        if (event.type !== 'compact_start') return;
        const session = event.session;
        for (const hook of selected('PreCompact', event.trigger)) {
          const input = JSON.stringify({ ...payloadFor(session, 'PreCompact'), trigger: event.trigger, custom_instructions: event.instructions ?? '' });
          const done = spawnSync('bash', ['-c', hook.command], { cwd: session.cwd, env: envFor(session), input, timeout: (hook.timeout ?? DEFAULT_TIMEOUT_S) * 1000, encoding: 'utf8' });
          if (done.status !== 0) log(`PreCompact hook "${hook.command}" failed (exit ${done.status ?? 'timeout'})`);
        }
      });
    }
  },
}));
