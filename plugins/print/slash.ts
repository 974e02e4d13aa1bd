import type { CommandDefinition, Kernel } from '../../kernel/index.js';

export interface SlashCall {
  command: CommandDefinition;
  args: string;
}

/**
 * A prompt such as `/compact keep the API notes` names a registered command. Anything else — including
 * prompts that merely start with a path like `/usr/bin …` — goes to the model.
 */
export async function parseSlash(kernel: Kernel, prompt: string): Promise<SlashCall | undefined> {
  const match = /^\/([a-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(prompt.trim());
  if (!match) return undefined;
  // A command a plugin attaches later (an MCP server's prompt) is waited for, within that plugin's limit.
  const command = await kernel.commands.settle(match[1]!);
  return command ? { command, args: (match[2] ?? '').trim() } : undefined;
}
