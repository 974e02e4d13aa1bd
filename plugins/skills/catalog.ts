/** The skills of one session: every SKILL.md found, parsed; bad ones become one-line errors, clashes are kept. */
import { splitToolList, z, type Kernel } from '../../kernel/index.js';
import { findSkillFolders, type SkillFolder, type SkillOrigin } from './discover.js';
import { readMarkdown, type FileReader } from './front-matter.js';

/**
 * Escape sequences and control characters (newlines and tabs aside), C1 controls and bidirectional overrides: a
 * description is printed by `/skills` and `/help`, where it must not set the title or clipboard or clear the screen.
 */
export const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
export const NO_CONTROLS = 'must not hold escape sequences or control characters';

/** The Agent Skills front matter; other keys (Claude Code's `model`, …) are allowed and ignored. */
export const skillFrontMatter = z.looseObject({
  name: z
    .string()
    .max(64, 'at most 64 characters')
    .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lowercase letters, digits and single hyphens only (e.g. pdf-forms)'),
  description: z.string().trim().min(1, 'must not be empty').max(1024, 'at most 1024 characters').refine((d) => !CONTROL.test(d), NO_CONTROLS),
  'allowed-tools': z.union([z.string(), z.array(z.string())]).optional(),
  license: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export interface Skill {
  name: string;
  description: string;
  body: string;
  dir: string;
  file: string;
  origin: SkillOrigin;
  where: string;
  allowedTools: string[];
  /** `allowed-tools` applies: the user installed the skill, or the project is trusted. */
  honoured: boolean;
}

export interface Catalog {
  skills: Skill[];
  /** A later skill of a name already taken: "<name>: <file> is shadowed by <file>". */
  clashes: string[];
  /** One line per SKILL.md that did not load. */
  errors: string[];
}

export async function loadCatalog(kernel: Kernel, where: { cwd: string; projectRoot: string }): Promise<Catalog> {
  // A config without `trusted` (an SDK host's own kernel) is the host's choice: treat it as trusted.
  const trusted = kernel.config.trusted !== false;
  const catalog: Catalog = { skills: [], clashes: [], errors: [] };
  const found = findSkillFolders(kernel, where);
  // Untrusted, yours (and plugins') come first and keep their names: a cloned repository cannot swap its text in
  // for a skill you rely on. Trusted, the project's wins.
  const folders = trusted ? found : [...found.filter((f) => f.origin !== 'project'), ...found.filter((f) => f.origin === 'project')];
  const files = kernel.services.require('project-files', 'skills');
  const parsed = await Promise.all(folders.map((folder) => parseSkill(folder, trusted, folder.origin === 'project' ? where.projectRoot : undefined, files)));
  for (const result of parsed) {
    if (typeof result === 'string') {
      catalog.errors.push(result);
      continue;
    }
    const first = catalog.skills.find((s) => s.name === result.name);
    if (first && !trusted && result.origin === 'project' && first.origin !== 'project') catalog.errors.push(`${result.file}: this project is not trusted, so your ${first.file} keeps the name ${result.name}`);
    else if (first) catalog.clashes.push(`${result.name}: ${result.file} is shadowed by ${first.file}`);
    else catalog.skills.push(result);
  }
  return catalog;
}

/** A project's SKILL.md must not resolve to a read-protected path, nor (untrusted) outside the project. */
async function parseSkill(folder: SkillFolder, trusted: boolean, projectRoot: string | undefined, files: FileReader): Promise<Skill | string> {
  const parsed = await readMarkdown(folder.file, skillFrontMatter, { required: 'name and description', ...(projectRoot === undefined ? {} : { project: projectRoot }) }, files);
  if (!parsed.ok) return parsed.error;
  const allowed = parsed.data['allowed-tools'];
  return {
    name: parsed.data.name,
    description: parsed.data.description.replace(/\s+/g, ' '),
    body: parsed.body,
    dir: folder.dir,
    file: folder.file,
    origin: folder.origin,
    where: folder.where,
    allowedTools: allowed === undefined ? [] : splitToolList(Array.isArray(allowed) ? allowed : [allowed]),
    honoured: folder.origin !== 'project' || trusted,
  };
}
