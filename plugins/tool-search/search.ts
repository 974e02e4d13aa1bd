import type { ToolDefinition } from '../../kernel/index.js';

/** Lower-case words of a tool name: `mcp__github__createIssue` → mcp, github, create, issue. */
export function nameTokens(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

const words = (text: string) => text.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);

/** Scores a tool against query terms: name hits weigh more than description hits. */
export function score(tool: ToolDefinition, query: string): number {
  const q = query.trim().toLowerCase();
  if (q === tool.name.toLowerCase()) return 1000;
  const name = tool.name.toLowerCase();
  const tokens = new Set(nameTokens(tool.name));
  const description = tool.description.toLowerCase();
  const descWords = new Set(words(tool.description));
  let total = 0;
  for (const term of words(q)) {
    if (tokens.has(term)) total += 10;
    else if (name.includes(term)) total += 6;
    if (descWords.has(term)) total += 3;
    else if (term.length > 2 && description.includes(term)) total += 1;
  }
  return total;
}

/** The best matches, best first; ties by name. */
export function searchTools(tools: ToolDefinition[], query: string, max: number): ToolDefinition[] {
  return tools
    .map((tool) => ({ tool, s: score(tool, query) }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s || a.tool.name.localeCompare(b.tool.name))
    .slice(0, max)
    .map((x) => x.tool);
}

/** The first sentence of a description, for a compact listing. */
export function firstSentence(text: string): string {
  const match = /^.*?[.!?](\s|$)/s.exec(text);
  const sentence = (match ? match[0] : text).trim();
  return sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence;
}
