/**
 * The content blocks a host's user message may carry, as the Messages API accepts them in a user turn. A block
 * the API would refuse (an unknown type, a missing field) is refused here with a line naming it, before it is
 * saved: kept in the session, it would make every later turn and every resume fail with a 400.
 */
import { z } from 'zod';

const cacheControl = z.object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() }).optional();
const citations = z.array(z.looseObject({ type: z.string() })).nullish();

const base64Image = z.object({ type: z.literal('base64'), media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), data: z.string().min(1) });
const imageSource = z.discriminatedUnion('type', [
  base64Image,
  z.object({ type: z.literal('url'), url: z.string().min(1) }),
  z.object({ type: z.literal('file'), file_id: z.string().min(1) }),
]);

const text = z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControl, citations });
const image = z.object({ type: z.literal('image'), source: imageSource, cache_control: cacheControl });
const document = z.object({
  type: z.literal('document'),
  source: z.discriminatedUnion('type', [
    z.object({ type: z.literal('base64'), media_type: z.literal('application/pdf'), data: z.string().min(1) }),
    z.object({ type: z.literal('text'), media_type: z.literal('text/plain'), data: z.string() }),
    z.object({ type: z.literal('url'), url: z.string().min(1) }),
    z.object({ type: z.literal('file'), file_id: z.string().min(1) }),
    z.object({ type: z.literal('content'), content: z.union([z.string(), z.array(z.union([text, image]))]) }),
  ]),
  title: z.string().nullish(),
  context: z.string().nullish(),
  citations: z.looseObject({ enabled: z.boolean().optional() }).nullish(),
  cache_control: cacheControl,
});
const searchResult = z.object({
  type: z.literal('search_result'),
  source: z.string(),
  title: z.string(),
  content: z.array(text),
  citations: z.looseObject({ enabled: z.boolean().optional() }).optional(),
  cache_control: cacheControl,
});
const toolResult = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [text, image, document, searchResult]))]).optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});

const BLOCKS = [text, image, document, searchResult, toolResult] as const;
export const ACCEPTED_BLOCK_TYPES = BLOCKS.map((schema) => schema.shape.type.value);
const block = z.discriminatedUnion('type', BLOCKS);

/** Undefined when every block is one the API accepts in a user turn, else what is wrong, naming the block and field. */
export function invalidBlock(content: unknown[]): string | undefined {
  for (let i = 0; i < content.length; i++) {
    const value = content[i] as { type?: unknown } | null;
    const where = `message.content[${i}]`;
    if (typeof value !== 'object' || value === null || typeof value.type !== 'string') return `${where}: a content block must be an object with a string "type"`;
    if (!ACCEPTED_BLOCK_TYPES.includes(value.type as never)) {
      return `${where}: unknown content block type "${value.type}" (a user message accepts ${ACCEPTED_BLOCK_TYPES.join(', ')})`;
    }
    const parsed = block.safeParse(value);
    if (parsed.success) continue;
    const issue = parsed.error.issues[0]!;
    const field = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
    return `${where}${field} (a "${value.type}" block): ${issue.message}`;
  }
  return undefined;
}
