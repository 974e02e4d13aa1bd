/** The prompt of a triggered run: the request, then its context, every piece of GitHub text sanitized (prose) or revealed (code). */
import { reveal, sanitize } from './sanitize.js';
import type { Trigger } from './event.js';

/** The most of a PR's diff the prompt carries; the agent can run git for the rest. */
export const MAX_DIFF_CHARS = 60_000;

export function buildPrompt(trigger: Trigger, repo: string, diff: string | undefined): string {
  const kind = trigger.isPullRequest ? 'pull request' : 'issue';
  const parts = [
    `You were mentioned by @${trigger.actor} on GitHub ${kind} ${repo}#${trigger.number}. Do what they ask; your final answer is posted as a reply.`,
    '',
    '<request>',
    sanitize(trigger.request),
    '</request>',
    '',
    `<${kind.replace(' ', '_')}>`,
    `Title: ${sanitize(trigger.title)}`,
    '',
    sanitize(trigger.body) || '(no description)',
    `</${kind.replace(' ', '_')}>`,
  ];
  if (trigger.reviewContext) {
    const file = reveal(trigger.reviewContext.path).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, (m, at: number, all: string) => (all.startsWith('<U+', at) ? m : '&lt;')).replace(/\n/g, ' ');
    parts.push('', `<review_comment_on file="${file}">`, reveal(trigger.reviewContext.diffHunk), '</review_comment_on>');
  }
  if (diff !== undefined) {
    diff = reveal(diff);
    const cut = diff.length > MAX_DIFF_CHARS;
    parts.push('', '<diff>', cut ? `${diff.slice(0, MAX_DIFF_CHARS)}\n… (the diff is cut here: ${diff.length} characters in all; run git diff for the rest)` : diff, '</diff>');
  }
  return parts.join('\n');
}
