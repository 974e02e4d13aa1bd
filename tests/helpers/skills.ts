/** Installs many skills as a user would from a public catalogue, for the request-weight test and bench/skills.mjs. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const TOPICS = ['pdf', 'docx', 'xlsx', 'pptx', 'release', 'review', 'migrate', 'deploy', 'translate', 'benchmark'];
const ACTIONS = ['forms', 'tables', 'notes', 'charts', 'audit', 'checklist', 'styles', 'scripts', 'reports', 'fixtures'];

/**
 * `count` skill folders under `root` (e.g. `$KEEL_HOME/skills`), each a SKILL.md with a catalogue-length
 * description (about 200 characters, as public skills have) and a bundled reference file.
 */
export function installSkills(root: string, count: number): string[] {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `${TOPICS[i % TOPICS.length]}-${ACTIONS[Math.floor(i / TOPICS.length) % ACTIONS.length]}${i >= 100 ? `-${i}` : ''}`;
    const description =
      `Creates, edits and checks ${name.replace('-', ' ')} for this team, following the house conventions in REFERENCE.md. ` +
      'Use when the user asks for it by name or when a task clearly involves these files or steps.';
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\nlicense: MIT\n---\n\n# ${name}\n\nRead REFERENCE.md first, then do the task step by step.\n`);
    writeFileSync(path.join(dir, 'REFERENCE.md'), `Conventions for ${name}.\n`);
    names.push(name);
  }
  return names;
}
