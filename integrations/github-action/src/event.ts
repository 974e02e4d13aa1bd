/** What a GitHub event asks of Keel: who asked, in which issue or pull request, and with what text. */

export interface Trigger {
  /** The login of the person (or bot) whose text holds the trigger phrase. */
  actor: string;
  actorIsBot: boolean;
  /** The issue or pull request number the answer is posted on. */
  number: number;
  isPullRequest: boolean;
  /** The text that holds the trigger phrase (a comment, or the issue's / PR's title and body). */
  request: string;
  title: string;
  body: string;
  /** For a review comment: the file and the diff hunk it is on. */
  reviewContext?: { path: string; diffHunk: string };
}

type Json = Record<string, any>; // GitHub's webhook payloads, read field by field below

/** The actions that start a run: new text only, so an edit, a label or a push never starts the same request twice. */
const ACTIONS: Record<string, string[]> = {
  issue_comment: ['created'],
  pull_request_review_comment: ['created'],
  issues: ['opened'],
  pull_request: ['opened', 'reopened', 'ready_for_review'],
};

/** The trigger of this event, or why there is none. */
export function findTrigger(eventName: string, payload: Json, phrase: string): Trigger | { skip: string } {
  const actions = ACTIONS[eventName];
  if (!actions) return { skip: `the ${eventName} event does not start a run without a prompt input` };
  if (payload.action && !actions.includes(payload.action)) return { skip: `${eventName}.${payload.action} does not start a run` };
  const issue: Json | undefined = payload.issue ?? payload.pull_request;
  if (!issue || typeof issue.number !== 'number') return { skip: `the ${eventName} payload has no issue or pull request` };
  const isPullRequest = Boolean(payload.pull_request || issue.pull_request);
  const comment: Json | undefined = eventName === 'issue_comment' || eventName === 'pull_request_review_comment' ? payload.comment : undefined;
  const request = comment ? String(comment.body ?? '') : `${issue.title ?? ''}\n\n${issue.body ?? ''}`;
  if (!containsPhrase(request, phrase)) return { skip: `no "${phrase}" in the ${comment ? 'comment' : eventName === 'issues' ? 'issue' : 'pull request'}` };
  const user: Json = (comment ? comment.user : issue.user) ?? payload.sender ?? {};
  return {
    actor: String(user.login ?? ''),
    actorIsBot: user.type === 'Bot',
    number: issue.number,
    isPullRequest,
    request,
    title: String(issue.title ?? ''),
    body: String(issue.body ?? ''),
    ...(eventName === 'pull_request_review_comment' && comment ? { reviewContext: { path: String(comment.path ?? ''), diffHunk: String(comment.diff_hunk ?? '') } } : {}),
  };
}

/** The phrase as a word of its own (`@keel`, not `@keeler`), in any case. */
export function containsPhrase(text: string, phrase: string): boolean {
  const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w@-])${escaped}(?![\\w-])`, 'i').test(text);
}
