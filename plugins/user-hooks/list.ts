/** `/hooks`: the user hooks in force, by event, with the file that set them. */
import type { HooksConfig } from './config.js';

export function hooksListing(config: HooksConfig | undefined, source: string | undefined, untrusted: readonly string[] = []): string {
  const lines: string[] = [];
  const events = Object.entries(config ?? {}).filter(([, matchers]) => matchers && matchers.length > 0);
  if (events.length === 0) lines.push('No user hooks are in force.');
  else {
    lines.push(`User hooks (from ${source ?? 'config'}):`);
    for (const [event, matchers] of events) {
      lines.push(`  ${event}`);
      for (const matcher of matchers ?? []) {
        const on = matcher.matcher && matcher.matcher !== '*' ? matcher.matcher : '(every one)';
        for (const hook of matcher.hooks) lines.push(`    ${on}: ${hook.command}${hook.timeout ? ` (timeout ${hook.timeout}s)` : ''}`);
      }
    }
  }
  if (untrusted.length) lines.push(`Not loaded (the project is not trusted): ${untrusted.join(', ')}`);
  lines.push('Set them under "hooks" in ~/.claude/settings.json, .claude/settings.json or agent.config.ts; keel plugins lists what plugins tap.');
  return lines.join('\n');
}
