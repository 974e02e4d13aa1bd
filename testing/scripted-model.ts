/**
 * A model that answers from a script, in process: a plugin on the `query` hook that wins over any provider,
 * records every request, and streams its text as delta events the way a provider does.
 */
import { Stage, type ContentBlock, type Plugin, type QueryRequest, type QueryResponse, type StopReason, type TokenUsage } from '../kernel/index.js';

/** A reply: plain text, or text and tool calls (`stopReason` defaults to `tool_use` when there are calls). */
export type ScriptedReply =
  | string
  | {
      text?: string;
      tools?: Array<{ name: string; input: unknown; id?: string }>;
      stopReason?: StopReason;
      usage?: Partial<TokenUsage>;
    };

/** A reply, or a function of the request that makes one (to answer from what the model was sent). */
export type ScriptStep = ScriptedReply | ((request: QueryRequest) => ScriptedReply);

export interface ScriptedModel extends Plugin {
  /** Every main-tier request, in order, as the loop built it. */
  readonly requests: QueryRequest[];
  /** Auxiliary (small-tier) requests: compaction summaries and the like; answered from the same script. */
  readonly auxiliary: QueryRequest[];
}

export const SCRIPTED_MODEL = 'scripted-model';

/** The plugin; give it to `testAgent` (or `kernel.use` it yourself, before `seal()`). */
export function scriptedModel(script: ScriptStep[], model = 'scripted-model'): ScriptedModel {
  const requests: QueryRequest[] = [];
  const auxiliary: QueryRequest[] = [];
  let next = 0;
  let ids = 0;
  return {
    name: SCRIPTED_MODEL,
    kernel: '^1.0.0',
    requests,
    auxiliary,
    apply(kernel) {
      kernel.hooks.query.tapPromise({ name: SCRIPTED_MODEL, stage: Stage.FIRST }, async (request, turn) => {
        (request.tier === 'small' ? auxiliary : requests).push(request);
        const step = script[next];
        if (step === undefined) {
          throw new Error(`${SCRIPTED_MODEL}: the script has ${script.length} replies, and request ${next + 1} asks for another`);
        }
        next += 1;
        const reply = typeof step === 'function' ? step(request) : step;
        const response = toResponse(reply, model, () => `toolu_scripted_${++ids}`);
        if (request.stream !== false && request.tier === 'main') {
          response.content.forEach((block, index) => {
            if (block.type === 'text') turn.emit({ type: 'text_delta', text: block.text, index });
          });
        }
        return response;
      });
    },
  };
}

function toResponse(reply: ScriptedReply, model: string, newId: () => string): QueryResponse {
  const { text, tools = [], stopReason, usage } = typeof reply === 'string' ? { text: reply } : reply;
  const content: ContentBlock[] = [];
  if (text !== undefined) content.push({ type: 'text', text, citations: null });
  for (const call of tools) content.push({ type: 'tool_use', id: call.id ?? newId(), name: call.name, input: call.input } as ContentBlock);
  return {
    id: `msg_scripted_${newId()}`,
    model,
    content,
    stopReason: stopReason ?? (tools.length > 0 ? 'tool_use' : 'end_turn'),
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage },
  };
}
