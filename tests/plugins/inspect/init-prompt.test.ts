import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { initPrompt, initTarget } from '../../../plugins/inspect/init-prompt.js';

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('/init', () => {
  it('writes AGENTS.md in a new project, improves an existing AGENTS.md or CLAUDE.md, and names the commands it found', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'keel-init-'));
    temps.push(dir);
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ scripts: { test: 'vitest', lint: 'eslint .' } }));
    expect(initTarget(dir)).toEqual({ file: 'AGENTS.md', exists: false });
    const fresh = initPrompt(dir, 'mention the docs folder');
    expect(fresh).toContain('write an AGENTS.md at the project root');
    expect(fresh).toContain('- Test: `npm test`');
    expect(fresh).toContain('- Lint: `npm run lint`');
    expect(fresh).toContain('The user adds: mention the docs folder');
    writeFileSync(path.join(dir, 'CLAUDE.md'), '# old');
    expect(initTarget(dir)).toEqual({ file: 'CLAUDE.md', exists: true });
    expect(initPrompt(dir, '')).toContain('improve its CLAUDE.md');
    writeFileSync(path.join(dir, 'AGENTS.md'), '# newer');
    expect(initTarget(dir)).toEqual({ file: 'AGENTS.md', exists: true });
  });
});
