import { describe, expect, it } from 'vitest';
import { planTitle, Transcript, type StaticItem } from '../../../plugins/ui-ink/transcript.js';
import stringWidth from 'string-width';
import { markupClosed, MarkdownStream } from '../../../plugins/ui-ink/markdown.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import type { AgentEvent } from '../../../kernel/index.js';
import { transcript } from '../../../plugins/session-store/user-items.js';

const paint = makePaint(false);
const glyphs = glyphsFor({ LANG: 'C.UTF-8' });

function collect(t: Transcript): StaticItem[] {
  const printed: StaticItem[] = [];
  let key = -1;
  t.subscribe(() => {
    const frame = t.frame;
    if (frame.staticKey !== key) printed.push(...frame.staticItems);
    key = frame.staticKey;
  });
  return printed;
}

const flushed = () => new Promise((r) => setTimeout(r, 10));

const call = { id: 't1', name: 'bash', input: { command: 'ls -la' } };

describe('the transcript', () => {
  it('prints each finished line of a streamed answer once, keeps the unfinished one live, and batches by frame', async () => {
    const t = new Transcript({ paint, glyphs, width: () => 80, frameMs: 1 });
    const printed = collect(t);
    t.startTurn();
    for (const text of ['Hel', 'lo\nwor', 'ld\n```ts\nconst a', ' = 1;\n```\nlast']) t.onEvent({ type: 'text_delta', text, index: 0 });
    expect(t.partial(1, 80)).toBe('last');
    await new Promise((r) => setTimeout(r, 10));
    t.onEvent({ type: 'assistant_message', message: { role: 'assistant', content: [] }, response: {} as never });
    t.endTurn();
    expect(printed.map((i) => i.text).join('\n')).toBe('Hello\nworld\n```ts\nconst a = 1;\n```\nlast');
    expect(new Set(printed.map((i) => i.id)).size).toBe(printed.length);
    expect(t.partial(1, 80)).toBe('');
  });

  it('shows a long unfinished line by its tail within the rows it is given', () => {
    const t = new Transcript({ paint, glyphs, width: () => 10, frameMs: 1 });
    t.onEvent({ type: 'text_delta', text: 'x'.repeat(100) + 'END', index: 0 });
    const shown = t.partial(2, 10);
    expect(shown.length).toBeLessThanOrEqual(19);
    expect(shown.endsWith('END')).toBe(true);
  });

  it('hands out each full row of a long streamed line at a word, under its bullet, never inside a span', async () => {
    const t = new Transcript({ paint, glyphs, width: () => 40, frameMs: 1 });
    const printed = collect(t);
    const words = Array.from({ length: 60 }, (_, i) => (i % 7 === 3 ? `\`code span ${i}\`` : i % 11 === 5 ? `**bold ${i}**` : `w${i}`));
    const line = `- ${words.join(' ')}`;
    // Streamed a few characters at a time, as tokens arrive.
    for (let i = 0; i < line.length; i += 3) {
      t.onEvent({ type: 'text_delta', text: line.slice(i, i + 3), index: 0 });
      // The live region never holds more than the row being written.
      expect(stringWidth(t.partial(5, 40))).toBeLessThanOrEqual(40);
    }
    await flushed();
    const streamed = printed.length;
    expect(streamed).toBeGreaterThan(5);
    t.onEvent({ type: 'text_delta', text: '\nnext line', index: 0 });
    t.endTurn();
    const rows = printed.flatMap((i) => i.text.split('\n'));
    expect(rows.at(-1)).toBe('next line');
    const body = rows.slice(0, -1);
    expect(body[0].startsWith('• w0 ')).toBe(true);
    for (const row of body.slice(1)) expect(row.startsWith('  ')).toBe(true);
    for (const row of body) {
      expect(stringWidth(row)).toBeLessThanOrEqual(40);
      expect(markupClosed(row)).toBe(true);
    }
    // Rows joined again are the line.
    expect(body.map((r, i) => (i === 0 ? r.slice(2) : r.slice(2))).join(' ')).toBe(words.join(' '));
  });

  it('renders the rows of a long line as the whole line renders, in colour, and keeps code-block lines whole', () => {
    const colour = makePaint(true);
    const line = 'Some **bold words** and `inline code` then *italic words here* and [a link](https://example.com/x) end '.repeat(4).trim();
    const whole = new MarkdownStream(colour, () => 10_000, glyphs);
    const expected = [...whole.push(line), ...whole.end()][0];
    const rows = new MarkdownStream(colour, () => 50, glyphs);
    const out = [...rows.push(line), ...rows.end()];
    expect(out.length).toBeGreaterThan(4);
    expect(out.join(' ')).toBe(expected);
    // A style's ESC [ before a link is not taken for the link's opening bracket.
    expect(expected).toContain('a link \x1b[34m\x1b[4m(https://example.com/x)');
    expect(expected).not.toMatch(/\x1b(?!\[)/);
    const code = new MarkdownStream(paint, () => 20, glyphs);
    const long = 'const x = ' + '1 + '.repeat(30) + '1;';
    expect([...code.push('```ts\n' + long), ...code.end()]).toEqual(['```ts', long]);
  });

  it('cuts a span that stays open for rows anyway, so the live region stays a few rows', () => {
    const m = new MarkdownStream(paint, () => 20, glyphs);
    const out = m.push('`' + 'open code '.repeat(20));
    expect(out.length).toBeGreaterThan(0);
    expect(stringWidth(m.partial())).toBeLessThanOrEqual(20 * 5);
  });

  it('a withdrawn answer keeps the rows already printed, marks the cut once, and the retry starts clean (outside a code block)', async () => {
    const t = new Transcript({ paint, glyphs, width: () => 30, frameMs: 1 });
    const printed = collect(t);
    t.startTurn();
    t.onEvent({ type: 'text_delta', text: 'first attempt\n```\ncode in the attempt\n', index: 0 });
    t.onEvent({ type: 'text_delta', text: 'and a very long line of the broken attempt that does not end', index: 0 });
    t.onEvent({ type: 'withdraw', reason: 'the response stream failed: boom' });
    t.onEvent({ type: 'text_delta', text: 'Retried **answer**', index: 0 });
    t.onEvent({ type: 'assistant_message', message: { role: 'assistant', content: [] }, response: {} as never });
    t.endTurn();
    const text = printed.map((i) => i.text).join('\n');
    expect(text.match(/the answer above was cut off/g)).toHaveLength(1);
    expect(text).toMatch(/\(the answer above was cut off: the response stream failed: boom\)\nRetried \*\*answer\*\*$/);
    // The unfinished rest of the withdrawn line is not printed.
    expect(text).not.toContain('does not end');
    // Long prose of a withdrawn attempt outside a code block: its full rows stay, above the note.
    const u = new Transcript({ paint, glyphs, width: () => 30, frameMs: 1 });
    const printedU = collect(u);
    u.onEvent({ type: 'text_delta', text: 'row one of the attempt goes here and row two follows it and the rest', index: 0 });
    u.onEvent({ type: 'withdraw', reason: 'boom' });
    u.onEvent({ type: 'text_delta', text: '```\nretried code', index: 0 });
    u.endTurn();
    const rowsU = printedU.flatMap((i) => i.text.split('\n'));
    expect(rowsU[0]).toBe('row one of the attempt goes');
    expect(rowsU.at(-3)).toBe('(the answer above was cut off: boom)');
    expect(rowsU.slice(-2)).toEqual(['```', 'retried code']);
  });

  it('keeps the full output of collapsed results for Ctrl+O and never collapses the user\'s own answers', async () => {
    const t = new Transcript({ paint, glyphs, width: () => 80, frameMs: 1 });
    const printed = collect(t);
    const answers = 'The user answered:\n1. Which database? Postgres\n2. Which port? 5432\n3. Tests? yes\n4. Docs? later\n5. Notes: my own words';
    t.onEvent({ type: 'tool_end', call: { id: 'q', name: 'ask_user_question', input: { questions: [{ question: 'Which database?' }] } }, result: { content: answers, display: { answers: [['Postgres']] } }, durationMs: 1 });
    t.onEvent({ type: 'tool_end', call, result: { content: '1\n2\n3\n4\n5\n6' }, durationMs: 1 });
    t.onEvent({ type: 'tool_end', call, result: { content: 'short' }, durationMs: 1 });
    await flushed();
    const text = printed.map((i) => i.text).join('\n');
    expect(text).toContain('5. Notes: my own words');
    expect(text.match(/… \+/g)).toHaveLength(1);
    expect(text).toContain('… +2 lines (ctrl+o to expand)');
    expect(t.collapsed).toEqual([{ title: 'bash(ls -la)', kind: 'output', lines: ['1', '2', '3', '4', '5', '6'] }]);
    for (let i = 0; i < 40; i++) t.onEvent({ type: 'tool_end', call, result: { content: `run ${i}\n2\n3\n4\n5\n6` }, durationMs: 1 });
    expect(t.collapsed.length).toBe(30);
    expect(t.collapsed.at(-1)!.lines[0]).toBe('run 39');
  });

  it('turns tool calls, denials, retries, compaction and errors into lines', () => {
    const t = new Transcript({ paint, glyphs, width: () => 80, frameMs: 1 });
    const printed = collect(t);
    const events: AgentEvent[] = [
      { type: 'tool_start', call },
      { type: 'tool_output', id: 't1', chunk: 'a\nb\nc\nd\ne\nf\n', stream: 'stdout' },
    ];
    for (const e of events) t.onEvent(e);
    expect(t.toolTail(t.tools.get('t1')!, 3)).toEqual(['d', 'e', 'f']);
    t.onEvent({ type: 'tool_end', call, result: { content: '1\n2\n3\n4\n5\n6' }, durationMs: 1 });
    t.onEvent({ type: 'tool_end', call: { id: 'e1', name: 'edit_file', input: { path: 'a.ts' } }, result: { content: 'Edited', display: { diff: '--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new' } }, durationMs: 1 });
    t.onEvent({ type: 'permission', call, decision: { behavior: 'deny', reason: 'rule bash(rm *)' }, source: 'permissions' });
    t.onEvent({ type: 'retry', attempt: 1, maxRetries: 3, delayMs: 2000, cause: 'overloaded' });
    t.onEvent({ type: 'compact', trigger: 'auto', preTokens: 150_000, postTokens: 20_000, tier: 'full' });
    t.onEvent({ type: 'log', level: 'error', message: 'the provider failed: boom' });
    t.printTodos([{ content: 'write tests', status: 'in_progress' }]);
    t.endTurn();
    const text = printed.map((i) => i.text).join('\n');
    expect(text).toContain('● bash(ls -la)\n  ⎿ 1\n    2\n    3\n    4\n    … +2 lines');
    expect(text).toContain('edit_file(a.ts)');
    expect(text).toContain('-old\n    +new');
    expect(text).toContain('✗ bash(ls -la) denied: rule bash(rm *)');
    expect(text).toContain('Retrying in 2 s (1/3): overloaded');
    expect(text).toContain('Context compacted (auto): 150k → 20k tokens');
    expect(text).toContain('Error: the provider failed: boom');
    expect(text).toContain('❯ write tests');
  });

  it('prints a resumed conversation once', () => {
    const t = new Transcript({ paint, glyphs, width: () => 80, frameMs: 1 });
    const printed = collect(t);
    t.printHistory([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'hello **there**' }, { type: 'tool_use', id: 'x', name: 'read_file', input: { path: 'a.md' } }] },
    ], transcript);
    t.endTurn();
    expect(printed.map((i) => i.text)).toEqual(['> hi', 'hello **there**\n● read_file(a.md)']);
  });
});

describe('markdown', () => {
  it('colours code blocks, headings and inline code when colours are on', () => {
    const md = new MarkdownStream(makePaint(true), () => 80, glyphs);
    const lines = md.push('# Title\nuse `x`\n```js\nconst a = "s"; // c\n```\n');
    expect(lines[0]).toContain('\x1b[1m');
    expect(lines[1]).toContain('\x1b[36mx');
    expect(lines[3]).toContain('\x1b[35mconst');
    expect(lines[3]).toContain('\x1b[32m"s"');
    expect(lines[3]).toContain('\x1b[90m// c');
  });

  it('leaves text plain without colours and draws lists and quotes with the glyphs given', () => {
    const md = new MarkdownStream(makePaint(false), () => 80, glyphsFor({ LANG: 'C' }));
    expect(md.push('- item\n> quote\n---\n')).toEqual(['- item', '| quote', '-'.repeat(40)]);
  });
});

describe('events of other plugins, read by shape', () => {

  it('prints a web search as one line: the query, the number of results and the sources cited', async () => {
    const t = new Transcript({ paint, glyphs, width: () => 100, frameMs: 1 });
    const printed = collect(t);
    t.onEvent({ type: 'text_delta', text: 'Node 22 ships V8 12.4.', index: 0 });
    const results = [
      { title: 'Node.js 22', url: 'https://nodejs.org/en/blog/release/v22.0.0' },
      { title: 'V8 12.4', url: 'https://www.v8.dev/blog/v8-release-124' },
      { title: 'Other', url: 'https://example.com/x' },
    ];
    const search = { type: 'web_search', query: 'node 22 v8', results, citations: [{ title: 'Node.js 22', url: results[0].url, citedText: 'V8 12.4' }] };
    t.onEvent(search as unknown as AgentEvent);
    await flushed();
    expect(printed.map((i) => i.text)).toEqual(['Node 22 ships V8 12.4.', '● Web search "node 22 v8" · 3 results · 1 cited (nodejs.org)']);
  });

  it('shows a client-side search by its event only, not its result block too', async () => {
    const t = new Transcript({ paint, glyphs, width: () => 100, frameMs: 1 });
    const printed = collect(t);
    const searchCall = { id: 's1', name: 'web_search', input: { query: 'ink 6' } };
    t.onEvent({ type: 'tool_start', call: searchCall } as AgentEvent);
    t.onEvent({ type: 'web_search', query: 'ink 6', results: [{ title: 'Ink', url: 'https://github.com/vadimdemedes/ink' }], citations: [] } as unknown as AgentEvent);
    t.onEvent({ type: 'tool_end', call: searchCall, result: { content: 'Results for "ink 6":\n1. Ink', display: { results: [{}] } }, durationMs: 1 } as AgentEvent);
    await flushed();
    expect(printed.map((i) => i.text)).toEqual(['● Web search "ink 6" · 1 result']);
  });

  it('prints a plan as markdown under a heading, and a change of permission mode', async () => {
    const t = new Transcript({ paint, glyphs, width: () => 80, frameMs: 1 });
    const printed = collect(t);
    t.printPlan('# Plan\n\n1. Read **the parser**\n- edit `lexer.ts`');
    t.onEvent({ type: 'permission_mode', sessionId: 's', from: 'plan', to: 'edits', reason: 'plan approved' } as unknown as AgentEvent);
    await flushed();
    expect(printed.map((i) => i.text)).toEqual(['● Plan\n  1. Read **the parser**\n  • edit `lexer.ts`', '· Permission mode: edits (plan approved)']);
  });

  it('shows a plan\'s title once: its own "Plan…" heading replaces the generic one, another heading stays under it', async () => {
    const t = new Transcript({ paint, glyphs, width: () => 80, frameMs: 1 });
    const printed = collect(t);
    t.printPlan('## Plan: fix the lexer ##\n\n- step');
    t.printPlan('# Refactor\n- step');
    t.printPlan('1. only steps');
    t.printPlan('\n\n# PLAN\n');
    await flushed();
    expect(printed.map((i) => i.text)).toEqual(['● Plan: fix the lexer\n  • step', '● Plan\n  Refactor\n  • step', '● Plan\n  1. only steps', '● PLAN']);
    expect(planTitle('#Plan')).toEqual({ title: 'Plan', body: '#Plan' });
  });

  it('shows a resumed server-side search as its line', async () => {
    const t = new Transcript({ paint, glyphs, width: () => 80, frameMs: 1 });
    const printed = collect(t);
    t.printHistory([
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'srv1', name: 'web_search', input: { query: 'q1' } },
          { type: 'web_search_tool_result', tool_use_id: 'srv1', content: [{ type: 'web_search_result', url: 'https://a.dev', title: 'A', encrypted_content: 'x', page_age: null }] },
          { type: 'text', text: 'found it' },
        ],
      },
    ] as never, transcript);
    await flushed();
    expect(printed.map((i) => i.text)).toEqual(['● Web search "q1" · 1 result\nfound it']);
  });
});
