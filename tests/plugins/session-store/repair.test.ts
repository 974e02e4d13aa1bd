import { describe, expect, it } from 'vitest';
import type { MessageParam } from '../../../kernel/index.js';
import { INTERRUPTED, repairToolPairs } from '../../../plugins/session-store/repair.js';

const use = (...ids: string[]): MessageParam => ({ role: 'assistant', content: ids.map((id) => ({ type: 'tool_use' as const, id, name: 't', input: {} })) });
const result = (id: string, content = 'ok') => ({ type: 'tool_result' as const, tool_use_id: id, content });
const interrupted = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: INTERRUPTED, is_error: true });

describe('repairToolPairs', () => {
  it('leaves a valid history alone (same array)', () => {
    const messages: MessageParam[] = [{ role: 'user', content: 'go' }, use('a'), { role: 'user', content: [result('a')] }, { role: 'assistant', content: 'done' }];
    const repaired = repairToolPairs(messages);
    expect(repaired.messages).toBe(messages);
    expect(repaired.fixes).toBe(0);
    expect(repaired.tailFix).toBeUndefined();
  });

  it('answers a missing result in a middle user message, results first and in call order', () => {
    const repaired = repairToolPairs([{ role: 'user', content: 'go' }, use('a', 'b'), { role: 'user', content: [result('b'), { type: 'text', text: 'and then' }] }]);
    expect(repaired.messages[2]).toEqual({ role: 'user', content: [interrupted('a'), result('b'), { type: 'text', text: 'and then' }] });
    expect(repaired.tailFix).toBeUndefined();
  });

  it('turns a plain-text user message after a tool_use into results plus the text', () => {
    const repaired = repairToolPairs([use('a'), { role: 'user', content: 'next prompt' }]);
    expect(repaired.messages[1]).toEqual({ role: 'user', content: [interrupted('a'), { type: 'text', text: 'next prompt' }] });
  });

  it('inserts a results message between two assistant messages, and appends one at the tail', () => {
    const repaired = repairToolPairs([use('a'), use('b')]);
    expect(repaired.messages.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant', 'user']);
    expect(repaired.tailFix).toBe(repaired.messages[3]);
    expect(repaired.fixes).toBe(2);
  });

  it('drops duplicate and orphan results, and a message left empty by that', () => {
    const repaired = repairToolPairs([
      { role: 'user', content: [result('ghost')] },
      use('a'),
      { role: 'user', content: [result('a'), result('a', 'again'), result('other')] },
    ]);
    expect(repaired.messages).toEqual([use('a'), { role: 'user', content: [result('a')] }]);
    expect(repaired.fixes).toBe(3);
  });
});
