/** `/init`: the prompt that has the model survey the repository and write or improve its instruction file. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { detect } from './init.js';

/** The file /init works on: AGENTS.md if present, else an existing CLAUDE.md, else a new AGENTS.md. */
export function initTarget(root: string): { file: string; exists: boolean } {
  for (const name of ['AGENTS.md', 'CLAUDE.md']) if (existsSync(path.join(root, name))) return { file: name, exists: true };
  return { file: 'AGENTS.md', exists: false };
}

export function initPrompt(root: string, extra: string): string {
  const { file, exists } = initTarget(root);
  const facts = detect(root);
  const known = facts.commands.length ? `\nCommands the project's own files name (check them before you rely on them):\n${facts.commands.map((c) => `- ${c.label}: \`${c.command}\``).join('\n')}\n` : '';
  return [
    `Survey this repository and ${exists ? `improve its ${file}` : `write an ${file}`} at the project root: the instructions every future coding session here starts with.`,
    '',
    'First explore: read the README, the package or build files, the CI configuration, the folder layout, and a few representative source and test files. Look for existing rule files (.cursorrules, .cursor/rules, .github/copilot-instructions.md, CLAUDE.md, AGENTS.md) and fold what is still true into the file.',
    '',
    `Then ${exists ? `edit ${file} with the file tools, keeping what is right and correcting what is stale` : `create ${file} with the file tools`}. Keep it short (under about 150 lines) and specific to this project:`,
    '- the commands to build, test (including a single test), lint and type-check;',
    '- the architecture in a few lines: the main folders and how the parts fit together, only what takes reading several files to learn;',
    '- the conventions that are not obvious from one file (naming, error handling, test style, generated files not to edit);',
    '- anything that surprises a newcomer (required environment, services to start, slow or flaky steps).',
    'Do not list every file, do not repeat generic advice (write tests, handle errors), and do not invent commands or facts you did not find.',
    exists ? '' : 'If front matter (--- fenced YAML) would be needed, leave it out: settings are for the user to add.',
    known,
    extra ? `The user adds: ${extra}` : '',
    `When you are done, say in two or three lines what ${file} now covers.`,
  ]
    .filter((line, i, all) => line !== '' || all[i - 1] !== '')
    .join('\n')
    .trim();
}
