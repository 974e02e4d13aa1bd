/**
 * Claude Code's names for the built-in tools, so its permission rules, `--allowedTools`, `--tools` and
 * `.claude/agents/*.md` files work unchanged. The permission rules, the CLI and the `agent` tool all read
 * this one table.
 */
export const CLAUDE_TOOL_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  // The first name for a Keel tool is the one Claude Code shows (what `claudeToolName` returns).
  Read: 'read_file',
  Write: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  Bash: 'bash',
  BashOutput: 'bash_output',
  KillShell: 'kill_shell',
  Glob: 'glob',
  Grep: 'grep',
  LS: 'ls',
  WebFetch: 'web_fetch',
  WebSearch: 'web_search',
  TodoWrite: 'todo_write',
  Task: 'agent',
  Agent: 'agent',
  ToolSearch: 'tool_search',
  NotebookEdit: 'notebook_edit',
  NotebookRead: 'read_file',
  ExitPlanMode: 'exit_plan_mode',
  AskUserQuestion: 'ask_user_question',
  Skill: 'skill',
  StructuredOutput: 'structured_output',
});

/** Keel's tools whose Claude Code rules take a path (`Read(//etc/**)`, `Edit(./src/**)`). */
export const PATH_RULE_TOOLS: ReadonlySet<string> = new Set(['read_file', 'write_file', 'edit_file', 'glob', 'grep', 'ls', 'notebook_edit']);

const CLAUDE_NAME_OF: ReadonlyMap<string, string> = new Map(
  Object.entries(CLAUDE_TOOL_ALIASES)
    .reverse()
    .map(([claude, keel]) => [keel, claude]),
);

/** Claude Code's name for a Keel tool (`bash` → `Bash`), or the name itself when Claude Code has no such tool. */
export function claudeToolName(name: string): string {
  return CLAUDE_NAME_OF.get(name) ?? name;
}

/** Keel's name for a tool named either way. */
export function canonicalToolName(name: string): string {
  return CLAUDE_TOOL_ALIASES[name] ?? name;
}

/**
 * Splits a list of tool names or rules as Claude Code's flags take them: separated by commas or spaces,
 * except inside the parentheses of a rule (`Bash(git diff:*),Read` is two rules).
 */
export function splitToolList(values: string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    let depth = 0;
    let current = '';
    for (const ch of value) {
      if (ch === '(') depth++;
      if (ch === ')') depth = Math.max(0, depth - 1);
      if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
        if (current) out.push(current);
        current = '';
      } else current += ch;
    }
    if (current) out.push(current);
  }
  return out;
}
