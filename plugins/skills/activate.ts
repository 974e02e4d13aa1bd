/** What using a skill does, for the model's `skill` call and the user's `/<name>` alike. */
import type { Kernel, Session } from '../../kernel/index.js';
import type { Skill } from './catalog.js';

/** What the skills plugin needs from the `session-permissions` service, when the preset has it. */
interface SessionPermissions {
  allow(session: Session, rules: string[], source: string): () => void;
}

/** The body with `$ARGUMENTS` filled in (or the arguments appended when the body has no place for them). */
function withArguments(body: string, args: string): string {
  // A function, not a string: `$&`, `$'` or `$$` in what the user typed are text, not replacement patterns.
  if (body.includes('$ARGUMENTS')) return body.replaceAll('$ARGUMENTS', () => args);
  return args ? `${body.trimEnd()}\n\nARGUMENTS: ${args}` : body;
}

/** The text the model gets: the skill's folder (for its bundled files), then its instructions. */
export function skillText(skill: Skill, args: string): string {
  return [
    `<skill name="${skill.name}">`,
    `Base folder: ${skill.dir}`,
    'Files the instructions mention are relative to this folder: read them with read_file when you need them.',
    '',
    withArguments(skill.body, args).trim(),
    '</skill>',
  ].join('\n');
}

/**
 * Applies the skill's `allowed-tools` to the session as allow rules, once, when the skill may grant them (the
 * user installed it, or the project is trusted). They join the session's rules, weighed after every deny and
 * ask rule, so a skill never loosens a deny. Returns a line for the model when the list could not be applied.
 */
export function grantAllowedTools(kernel: Kernel, session: Session, skill: Skill, granted: Set<string>): string | undefined {
  if (skill.allowedTools.length === 0 || !skill.honoured || granted.has(skill.name)) return undefined;
  const service = kernel.services.get('session-permissions') as Partial<SessionPermissions> | undefined;
  if (typeof service?.allow !== 'function') return undefined;
  try {
    service.allow(session, skill.allowedTools, `${skill.file}: field "allowed-tools"`);
    granted.add(skill.name);
    return undefined;
  } catch (err) {
    return `Note: the skill's allowed-tools were not applied: ${err instanceof Error ? err.message : String(err)}`;
  }
}
