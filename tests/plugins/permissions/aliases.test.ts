import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { canonicalToolName, claudeToolName, CLAUDE_TOOL_ALIASES, splitToolList } from '../../../kernel/index.js';
import { parseRule, parseRules } from '../../../plugins/permissions/rules.js';

describe("Claude Code's tool names in permission rules", () => {
  it('name Keel tools, with or without a specifier', () => {
    expect(parseRule('allow', 'Read', 'x')).toMatchObject({ tool: 'read_file', specifier: undefined });
    expect(parseRule('allow', 'Bash(git diff:*)', 'x')).toMatchObject({ tool: 'bash', specifier: 'git diff:*' });
    expect(parseRule('deny', 'WebFetch(domain:example.com)', 'x')).toMatchObject({ tool: 'web_fetch', specifier: 'domain:example.com' });
    expect(parseRules({ allow: ['Edit(src/**)', 'MultiEdit', 'Write'], ask: ['TodoWrite'], deny: ['Task', 'Glob', 'Grep', 'LS'] }, 'flags').map((r) => r.tool)).toEqual([
      'agent',
      'glob',
      'grep',
      'ls',
      'todo_write',
      'edit_file',
      'edit_file',
      'write_file',
    ]);
  });

  it("cover the everyday tools too (WebSearch, NotebookEdit, BashOutput, KillShell, ExitPlanMode, AskUserQuestion)", () => {
    expect(parseRules({ allow: ['WebSearch', 'NotebookEdit(nb/**)', 'BashOutput', 'KillShell', 'ExitPlanMode', 'AskUserQuestion', 'NotebookRead'], ask: [], deny: [] }, 'flags').map((r) => r.tool)).toEqual([
      'web_search',
      'notebook_edit',
      'bash_output',
      'kill_shell',
      'exit_plan_mode',
      'ask_user_question',
      'read_file',
    ]);
  });

  it('every alias the README lists is one the table maps, to the tool it names, and the table has no other', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    const listed = readme.slice(readme.indexOf("Claude Code's tool names are aliases of Keel's in every rule"), readme.indexOf('(the table is `kernel/tool-names.ts`)'));
    const pairs = [...listed.replace(/\s+/g, ' ').matchAll(/`(\w+)`(?: and `(\w+)`)? = `(\w+)`/g)].flatMap((m) => [[m[1], m[3]], ...(m[2] ? [[m[2], m[3]]] : [])]);
    expect(Object.fromEntries(pairs)).toEqual({ ...CLAUDE_TOOL_ALIASES });
    for (const [claude, keel] of pairs) expect(parseRule('deny', `${claude}(x)`, 'x').tool).toBe(keel);
  });

  it("map back to the name Claude Code shows, for hook scripts written for it", () => {
    expect(['read_file', 'edit_file', 'agent', 'bash', 'web_search', 'notebook_edit', 'tool_search', 'mcp__gh__issue'].map(claudeToolName)).toEqual([
      'Read',
      'Edit',
      'Task',
      'Bash',
      'WebSearch',
      'NotebookEdit',
      'ToolSearch',
      'mcp__gh__issue',
    ]);
  });

  it("leaves Keel's own names and unknown names alone", () => {
    expect(canonicalToolName('read_file')).toBe('read_file');
    expect(canonicalToolName('mcp__github__issue')).toBe('mcp__github__issue');
    expect(canonicalToolName('Frobnicate')).toBe('Frobnicate');
  });

  it('splits flag values on commas and spaces, but not inside a rule', () => {
    expect(splitToolList(['Bash(git diff:*),Read', 'Edit  Write', 'Bash(npm run test, lint)'])).toEqual(['Bash(git diff:*)', 'Read', 'Edit', 'Write', 'Bash(npm run test, lint)']);
  });
});
