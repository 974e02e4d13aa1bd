/** The reviewer's rules, free of Keel so they can be tested on their own. */

/** What the reviewer is told, appended to the system prompt. */
export const BRIEF = [
  'You are reviewing code, not changing it.',
  'Read what you need, then report findings as a list: file and line, what is wrong, why it matters, and the fix you suggest.',
  'You have read-only tools: you cannot write or edit files, run commands or reach the network, so do not try.',
].join(' ');

/** Only tools that read: writing, editing, running commands, sub-agents and the network are left out. */
export function allowed(tool) {
  return tool !== undefined && tool.permission === 'read';
}

const CAN = { write: 'change files', execute: 'run commands', network: 'reach the network' };

/** A call to a tool that is not read-only (or unknown) is refused, with the reason the model sees. */
export function refusal(name, tool) {
  if (allowed(tool)) return undefined;
  const what = tool ? `a tool that can ${CAN[tool.permission] ?? 'do more than read'}` : 'not a known tool';
  return `Permission denied by keel-preset-reviewer: ${name} is ${what}, and a review only reads; report the change you would make instead`;
}
