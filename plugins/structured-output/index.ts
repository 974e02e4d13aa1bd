/**
 * `--json-schema`: the run ends in an answer that validates against the user's JSON Schema. The model gives it
 * through the tool `structured_output` (Claude Code's `StructuredOutput`), whose input schema is the user's; an
 * invalid answer (or an answer given as text) goes back with the problems, at most `structuredOutputRetries`
 * times, then the run ends with Claude Code's `error_max_structured_output_retries`. The accepted value is the
 * result's `structured_output`.
 */
import { z } from 'zod';
import { canonicalToolName, definePlugin, defineTool, KeelError, type Kernel, type Session } from '../../kernel/index.js';
import { compileSchema, type Validator } from './validate.js';

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** A JSON Schema (an object at the top) the run's final answer must validate against (`--json-schema`). */
    jsonSchema?: Record<string, unknown>;
    /** How many invalid structured answers are sent back to the model before the run fails (default 3). */
    structuredOutputRetries?: number;
  }
}

const NAME = 'structured-output';
export const STRUCTURED_OUTPUT_TOOL = 'structured_output';
const DEFAULT_RETRIES = 3;

const schemaConfig = z.record(z.string(), z.unknown()).refine((s) => s.type === undefined || s.type === 'object', {
  message: 'the top level of the schema must describe an object ({"type": "object", …}): it is the input schema of a tool',
});

interface RunState {
  failures: number;
  accepted: boolean;
  lastProblems: string[];
}

function stateOf(session: Session): RunState {
  let state = session.data.get(NAME) as RunState | undefined;
  if (!state) session.data.set(NAME, (state = { failures: 0, accepted: false, lastProblems: [] }));
  return state;
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  config: { jsonSchema: schemaConfig, structuredOutputRetries: z.number().int().min(0).max(20) },
  apply(kernel: Kernel) {
    const schema = kernel.config.jsonSchema;
    if (!schema) return;
    const given = kernel.config.tools;
    if (Array.isArray(given) && !given.some((name) => canonicalToolName(name) === STRUCTURED_OUTPUT_TOOL)) {
      // The answer comes through the tool: an agent without it could never finish.
      throw new KeelError(`--json-schema: --tools (config tools) leaves out ${STRUCTURED_OUTPUT_TOOL}, the tool the answer comes through; add StructuredOutput to the list`, { code: 'config', exitCode: 2 });
    }
    const retries = kernel.config.structuredOutputRetries ?? DEFAULT_RETRIES;
    let validator: Promise<Validator> | undefined;
    const compiled = () => (validator ??= compileSchema(schema));

    kernel.tools.register(
      defineTool({
        name: STRUCTURED_OUTPUT_TOOL,
        description:
          'Give your final answer as structured data: call this exactly once, when you are done, with the answer as the input. Its input schema is the shape the answer must have.',
        permission: 'read',
        input: z.record(z.string(), z.unknown()),
        jsonSchema: schema,
        async execute(input, ctx) {
          const state = stateOf(ctx.session);
          const problems = (await compiled()).check(input);
          if (!problems) {
            state.accepted = true;
            return { content: 'Structured output accepted.', endRun: { result: JSON.stringify(input), fields: { structured_output: input } } };
          }
          state.failures++;
          state.lastProblems = problems;
          return { content: `The structured output does not match the schema:\n${problems.map((p) => `- ${p}`).join('\n')}\nCall ${STRUCTURED_OUTPUT_TOOL} again with a corrected answer.`, isError: true };
        },
      }),
    );

    // The schema is checked when the session starts, so a bad one fails before any request.
    kernel.hooks.sessionStart.tapPromise(NAME, async () => {
      await compiled();
    });

    kernel.hooks.contextLoad.tapPromise(NAME, async (context, turn) => {
      // Each run (user prompt) gets its own attempts.
      if (turn.index === 1) turn.session.data.set(NAME, { failures: 0, accepted: false, lastProblems: [] });
      return context;
    });

    kernel.hooks.postTurn.tapPromise(NAME, async (record, turn) => {
      const state = stateOf(turn.session);
      if (state.accepted) return;
      const calledTools = record.response.content.some((block) => block.type === 'tool_use');
      if (!calledTools && record.response.stopReason !== 'max_tokens') {
        // The model answered in text: that is an attempt too.
        state.failures++;
        state.lastProblems = [`the answer was given as text, not through the ${STRUCTURED_OUTPUT_TOOL} tool`];
        if (state.failures <= retries) {
          record.followUp = {
            role: 'user',
            content: `You must give your final answer by calling the ${STRUCTURED_OUTPUT_TOOL} tool, with input matching its schema. Call it now.`,
          };
        }
      }
      if (state.failures > retries) {
        record.followUp = undefined;
        record.end = {
          subtype: 'error_max_structured_output_retries',
          error: `no valid structured output after ${state.failures} attempts (limit ${retries} retries, config structuredOutputRetries): ${state.lastProblems.join('; ')}`,
        };
      }
    });
  },
}));
