/** `keel init`: a typed agent.config.ts and an AGENTS.md skeleton drawn from what the project already says. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ProjectFacts {
  name: string;
  packageManager?: string;
  commands: Array<{ label: string; command: string }>;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The package manager, and the install/test/build/lint commands the project's own files name. */
export function detect(root: string): ProjectFacts {
  const has = (name: string) => existsSync(path.join(root, name));
  const facts: ProjectFacts = { name: path.basename(root), commands: [] };
  const pkg = readJson(path.join(root, 'package.json'));
  if (pkg) {
    if (typeof pkg.name === 'string') facts.name = pkg.name;
    const pm = has('pnpm-lock.yaml') ? 'pnpm' : has('yarn.lock') ? 'yarn' : has('bun.lockb') || has('bun.lock') ? 'bun' : 'npm';
    facts.packageManager = pm;
    facts.commands.push({ label: 'Install', command: pm === 'npm' && has('package-lock.json') ? 'npm ci' : `${pm} install` });
    const scripts = (pkg.scripts ?? {}) as Record<string, unknown>;
    for (const [label, script] of [['Test', 'test'], ['Build', 'build'], ['Lint', 'lint'], ['Type-check', 'typecheck']] as const) {
      if (typeof scripts[script] === 'string') facts.commands.push({ label, command: script === 'test' ? `${pm} test` : `${pm} run ${script}` });
    }
  } else if (has('Cargo.toml')) {
    facts.packageManager = 'cargo';
    facts.commands.push({ label: 'Build', command: 'cargo build' }, { label: 'Test', command: 'cargo test' }, { label: 'Lint', command: 'cargo clippy' });
  } else if (has('go.mod')) {
    facts.packageManager = 'go';
    facts.commands.push({ label: 'Build', command: 'go build ./...' }, { label: 'Test', command: 'go test ./...' }, { label: 'Lint', command: 'go vet ./...' });
  } else if (has('pyproject.toml') || has('setup.py') || has('requirements.txt')) {
    facts.packageManager = has('uv.lock') ? 'uv' : has('poetry.lock') ? 'poetry' : 'pip';
    facts.commands.push({ label: 'Test', command: facts.packageManager === 'uv' ? 'uv run pytest' : facts.packageManager === 'poetry' ? 'poetry run pytest' : 'pytest' });
  }
  if (!facts.commands.some((c) => c.label === 'Test') && has('Makefile') && /^test:/m.test(readFileSync(path.join(root, 'Makefile'), 'utf8'))) {
    facts.commands.push({ label: 'Test', command: 'make test' });
  }
  return facts;
}

export function configText(facts: ProjectFacts): string {
  const allow = facts.commands.filter((c) => c.label !== 'Install').map((c) => `bash(${c.command})`);
  return `/**
 * Keel's config for ${facts.name}. Keel loads it only in a folder you trust: run \`keel trust\` here.
 * Every key is optional; \`keel config\` prints what is in effect and where each value came from.
 */
import { defineConfig } from 'keel';

export default defineConfig({
  // The plugin set: 'default', 'headless', 'minimal', 'policy-strict', or definePreset({ extends: 'default', … }).
  preset: 'default',
  // auto | edits | ask | manual: what runs without asking (edits: file changes run, commands ask).
  permissionMode: 'ask',
  permissions: {
    // Commands the project's own files name, allowed without asking (flags that write or run more are still asked).
    allow: [${allow.map((a) => `'${a.replace(/'/g, "\\'")}'`).join(', ')}],
    // Never read secrets.
    deny: ['read_file(.env)', 'read_file(.env.*)'],
  },
  // Run shell commands inside bubblewrap (Linux): the project writable, the rest read-only, no network.
  // sandbox: { enabled: true, network: { allowedDomains: ['registry.npmjs.org'] } },
});
`;
}

export function agentsText(facts: ProjectFacts): string {
  const commands = facts.commands.length
    ? facts.commands.map((c) => `- ${c.label}: \`${c.command}\``).join('\n')
    : '- (how to install, build and test this project)';
  return `# ${facts.name}

Instructions for coding agents (Keel reads this file at the start of every session).

## Commands

${commands}

## Layout

- (where the source, tests and docs live)

## Conventions

- (code style, naming, what a change must include: tests, docs)
- Run the tests before you finish.
`;
}

/** Writes the files that do not exist yet (all of them with `force`); returns what it did, line by line. */
export function init(root: string, force: boolean): string[] {
  const facts = detect(root);
  const out: string[] = [];
  for (const [name, text] of [['agent.config.ts', configText(facts)], ['AGENTS.md', agentsText(facts)]] as const) {
    const file = path.join(root, name);
    if (existsSync(file) && !force) {
      out.push(`${file} exists: left as it is (--force to overwrite)`);
      continue;
    }
    writeFileSync(file, text);
    out.push(`wrote ${file}`);
  }
  if (facts.packageManager) out.push(`detected ${facts.packageManager}${facts.commands.length ? `: ${facts.commands.map((c) => c.command).join(', ')}` : ''}`);
  out.push('Keel loads agent.config.ts only in a trusted folder: run keel trust here.');
  return out;
}
