/** The Ink UI in a real terminal: the model's choice questions, plan approval and web searches. */
import { describe, expect, it } from 'vitest';
import { callTool, callTools, say, type ScriptStep, type ScriptedServer } from '../helpers/anthropic-server.js';
import { terminalFixture } from '../helpers/terminal-fixture.js';
import { hasTmux, waitForDialog } from '../helpers/tmux.js';

const fixture = terminalFixture();

const start = (script: ScriptStep[], opts: { args?: string[]; width?: number; height?: number; ready?: RegExp } = {}) => fixture.start(script, opts);

/** The text of the tool_result the model got back in request `n`. */
function toolResultText(s: ScriptedServer, n: number, index = 0): string {
  const content = s.requests[n].body.messages.at(-1).content as Array<{ type: string; content: unknown }>;
  const results = content.filter((b) => b.type === 'tool_result');
  return JSON.stringify(results[index]?.content);
}

const QUESTIONS = {
  questions: [
    { question: 'Which database should the service use?', header: 'Database', options: [{ label: 'Postgres', description: 'a server' }, { label: 'SQLite', description: 'one file' }] },
    { question: 'Which extras?', header: 'Extras', multiSelect: true, options: [{ label: 'Auth' }, { label: 'Search' }, { label: 'Billing' }] },
  ],
};

describe.skipIf(!hasTmux)('the Ink UI answers the model', () => {
  it('asks choice questions one by one (multi-select, own words), queues those of parallel calls, and Esc declines', async () => {
    const { term: t, server: s } = await start([
      callTool('ask_user_question', QUESTIONS),
      say('noted your choices'),
      callTools(
        { name: 'ask_user_question', input: { questions: [{ question: 'First parallel question?', header: 'One', options: [{ label: 'A' }, { label: 'B' }] }] } },
        { name: 'ask_user_question', input: { questions: [{ question: 'Second parallel question?', header: 'Two', options: [{ label: 'C' }, { label: 'D' }] }] } },
      ),
      say('both answered'),
    ]);
    t.type('set up the service');
    t.keys('Enter');
    // (the running tool's line names the question too: wait for the dialog itself)
    await waitForDialog(t, /Which database should the service use\?\s*│?\n.*1\. Postgres[\s\S]*a server[\s\S]*2\. SQLite[\s\S]*one file[\s\S]*3\. Other/);
    t.keys('2');
    await t.waitFor(/Which extras\?[\s\S]*Billing/);
    t.keys('Space', 'Down', 'Down', 'Space');
    await t.waitFor(/\[x\] Auth[\s\S]*\[x\] Billing/);
    t.type('and logs');
    await t.waitFor(/Other: and logs/);
    t.keys('Enter');
    await t.waitFor(/noted your choices/);
    expect(toolResultText(s, 1)).toContain('Which database should the service use?\\n→ SQLite\\nWhich extras?\\n→ Auth, Billing, and logs');

    t.type('ask two at once');
    t.keys('Enter');
    await waitForDialog(t, /\(1 more waiting\)[\s\S]*First parallel question\?[\s\S]*1\. A/);
    t.keys('1');
    // Until the count of waiting questions is gone (a dialog that kept it would time out here).
    await t.waitFor(/^(?![\s\S]*more waiting)[\s\S]*Second parallel question\?[\s\S]*1\. C/);
    t.keys('Escape');
    await t.waitFor(/both answered/);
    expect(toolResultText(s, 3, 0)).toContain('First parallel question?\\n→ A');
    expect(toolResultText(s, 3, 1)).toContain('The user declined to answer');
  });

  it('shows a plan as markdown in the scrollback, sends feedback on "keep planning", and approval switches to edits mode', async () => {
    const plan = '# Plan: fix the parser\n\n1. Read **lexer.ts**\n2. Add a test\n\n```ts\nconst fixed = true;\n```';
    const { term: t, server: s } = await start(
      [callTool('exit_plan_mode', { plan }), callTool('exit_plan_mode', { plan: '# Plan v2\n\n- just the test' }), say('carrying it out')],
      { args: ['--permission-mode', 'plan'], ready: /plan mode/ },
    );
    t.type('plan a fix');
    t.keys('Enter');
    // The whole dialog, its answers included, under the plan before a key is pressed.
    const dialog = /Approve the plan above\?[\s\S]*3\. No, and tell the model what to change/;
    // The plan's own heading is its title: "Plan" is shown once, not as "● Plan" over "Plan: fix the parser".
    const screen = await waitForDialog(t, new RegExp(`● Plan: fix the parser\\n  1\\. Read lexer\\.ts\\n  2\\. Add a test\\n\\n  \`\`\`ts\\n[\\s\\S]*${dialog.source}`));
    expect(screen.match(/Plan: fix the parser/g)).toHaveLength(1);
    expect(screen).toContain('const fixed = true;');
    expect(screen).not.toContain('**');
    t.type('use the existing tokenizer');
    await t.waitFor(/what to change: use the existing tokenizer/);
    t.keys('Enter');
    const second = await waitForDialog(t, new RegExp(`● Plan v2\\n  • just the test[\\s\\S]*${dialog.source}`));
    expect(toolResultText(s, 1)).toContain('Their feedback: use the existing tokenizer');
    expect(second).toContain('plan mode');
    t.keys('y');
    await t.waitFor(/carrying it out/);
    await t.waitFor(/Permission mode: edits \(plan approved\)/);
    await t.waitFor(/edits mode/);
    expect(toolResultText(s, 2)).toContain('The user approved the plan');
  });

  it('Ctrl+C in a dialog interrupts the turn and denies the question', async () => {
    const { term: t, server: s } = await start([callTool('bash', { command: 'echo never' }), say('after the interruption')]);
    t.type('run it');
    t.keys('Enter');
    await t.waitFor(/bash wants permission[\s\S]*4\. Deny, and don't ask again/);
    t.keys('C-c');
    expect(await t.waitFor(/Interrupted\./)).not.toContain('wants permission');
    t.type('next');
    t.keys('Enter');
    await t.waitFor(/after the interruption/);
    expect(JSON.stringify(s.requests[1].body.messages)).toContain('next');
  });

  it('shows each web search as one line with its query, results and sources', async () => {
    const result = (url: string, title: string) => ({ type: 'web_search_result', url, title, encrypted_content: 'x', page_age: null });
    const { term: t } = await start([
      {
        content: [
          { type: 'text', text: 'Let me look that up.' },
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'node 22 v8 version' } },
          { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [result('https://nodejs.org/en/blog/release/v22.0.0', 'Node.js 22'), result('https://v8.dev/blog', 'V8')] },
          {
            type: 'text',
            text: 'Node.js 22 ships V8 12.4.',
            citations: [{ type: 'web_search_result_location', url: 'https://nodejs.org/en/blog/release/v22.0.0', title: 'Node.js 22', encrypted_index: 'e', cited_text: 'V8 12.4' }],
          },
        ],
      } as ScriptStep,
    ]);
    t.type('which v8?');
    t.keys('Enter');
    await t.waitFor(/Web search "node 22 v8 version" · 2 results · 1 cited \(nodejs\.org\)/);
    await t.waitFor('Let me look that up.Node.js 22 ships V8 12.4.');
  });
});
