import { describe, expect, it } from 'vitest';
import { invalidBlock } from '../../../plugins/sdk/blocks.js';

describe("the content blocks an SDK host's user message may carry", () => {
  it('accepts what the Messages API accepts in a user turn', () => {
    expect(
      invalidBlock([
        { type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' }, title: 'notes' },
        { type: 'search_result', source: 'https://example.com', title: 'x', content: [{ type: 'text', text: 'y' }] },
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'ok' }], is_error: false },
      ]),
    ).toBeUndefined();
  });

  it('names an unknown block type, and the field at fault in a known one', () => {
    expect(invalidBlock([{ type: 'text', text: 'a' }, { type: 'mystery', x: 1 }])).toBe(
      'message.content[1]: unknown content block type "mystery" (a user message accepts text, image, document, search_result, tool_result)',
    );
    expect(invalidBlock([{ type: 'text' }])).toMatch(/^message\.content\[0\]\.text \(a "text" block\): /);
    expect(invalidBlock([{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'x' } }])).toMatch(/^message\.content\[0\]\.source\.media_type \(a "image" block\): /);
    expect(invalidBlock([{ type: 'tool_result' }])).toMatch(/^message\.content\[0\]\.tool_use_id /);
    expect(invalidBlock(['text'])).toBe('message.content[0]: a content block must be an object with a string "type"');
  });
});
