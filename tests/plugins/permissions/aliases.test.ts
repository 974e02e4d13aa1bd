import { describe, expect, it } from 'vitest';
import { canonicalToolName, splitToolList } from '../../../kernel/index.js';
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

  it("leaves Keel's own names and unknown names alone", () => {
    expect(canonicalToolName('read_file')).toBe('read_file');
    expect(canonicalToolName('mcp__github__issue')).toBe('mcp__github__issue');
    expect(canonicalToolName('Frobnicate')).toBe('Frobnicate');
  });

  it('splits flag values on commas and spaces, but not inside a rule', () => {
    expect(splitToolList(['Bash(git diff:*),Read', 'Edit  Write', 'Bash(npm run test, lint)'])).toEqual(['Bash(git diff:*)', 'Read', 'Edit', 'Write', 'Bash(npm run test, lint)']);
  });
});
