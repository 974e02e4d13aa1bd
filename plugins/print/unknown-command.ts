/** `keel -p "/init2"`: a request that names no command is refused, with the near names, instead of sent as a paid prompt. */
import { distance } from 'fastest-levenshtein';
import { KeelError, type Kernel } from '../../kernel/index.js';

/** The same shape findSlashCommand takes for a command (`/name`, `/folder:name`, then arguments). */
const SLASH = /^\/([a-z][\w-]*(?::[\w-]+)*)(?:\s|$)/;

/** Throws (exit 2) when `prompt` names a slash command that no plugin registered once the session started. */
export function refuseUnknownCommand(kernel: Kernel, prompt: string): void {
  const name = SLASH.exec(prompt.trim())?.[1];
  if (!name) return;
  const limit = Math.max(1, Math.floor(name.length / 3));
  const near = kernel.commands
    .names()
    .map((known) => ({ known, d: distance(name, known) }))
    .filter((s) => s.d <= limit || s.known.startsWith(name) || name.startsWith(s.known))
    .sort((a, b) => a.d - b.d || a.known.localeCompare(b.known))
    .slice(0, 3)
    .map((s) => `/${s.known}`);
  const hint = near.length ? ` (did you mean ${near.join(', ')}?)` : '';
  throw new KeelError(`unknown command /${name}${hint}; keel -p /help lists them (to ask the model, start with a word: -p "about /${name}")`, { exitCode: 2 });
}
