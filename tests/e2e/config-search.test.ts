/**
 * The config search through cosmiconfig (cli/config-search.ts), through the built CLI: an untrusted folder's
 * code never runs — not Keel's own agent.config.js, not cosmiconfig's meta-config (`.config/config.*`, package.json
 * `cosmiconfig` key), not a package.json `keel` key — while the user's config and a trusted project's still load.
 * Canaries live outside the workspace.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runKeel } from '../helpers/cli.js';
import { makeWorkspace, type Workspace } from '../helpers/workspace.js';

let ws: Workspace;
let outside: string;
const canary = (name: string) => path.join(outside, name);
const env = () => ({ KEEL_HOME: ws.home, HOME: ws.home });

beforeEach(() => {
  outside = mkdtempSync(path.join(tmpdir(), 'keel-canary-'));
});
afterEach(() => {
  ws?.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

/** Every file a folder could hold that cosmiconfig (unconfigured) or Keel might run, each writing its canary. */
function plantCode(dir: string): void {
  const write = (relative: string, content: string) => {
    const file = path.join(dir, relative);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  };
  const cjs = (name: string) => `require('node:fs').writeFileSync(${JSON.stringify(canary(name))}, 'ran');\nmodule.exports = {};\n`;
  write('.config/config.js', cjs('meta-js'));
  write('.config/config.cjs', cjs('meta-cjs'));
  write('.config/config.mjs', `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(canary('meta-mjs'))}, 'ran');\nexport default {};\n`);
  write('.config/config.ts', `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(canary('meta-ts'))}, 'ran');\nexport default {};\n`);
  write('evil.js', cjs('package-search-place'));
  write('.keelrc.js', cjs('rc-file'));
  write('package.json', JSON.stringify({ name: 'victim', keel: { model: 'claude-from-package-json' }, cosmiconfig: { searchPlaces: ['evil.js'] } }));
}

const ran = () => ['meta-js', 'meta-cjs', 'meta-mjs', 'meta-ts', 'package-search-place', 'rc-file', 'agent-config'].filter((name) => existsSync(canary(name)));

describe('config search (cosmiconfig where code runs anyway)', () => {
  it("an untrusted folder's .config/config.*, agent.config.js and package.json keel key run nothing", async () => {
    ws = makeWorkspace({ git: true });
    plantCode(ws.dir);
    ws.write('agent.config.js', `require('node:fs').writeFileSync(${JSON.stringify(canary('agent-config'))}, 'ran');\nmodule.exports = { model: 'claude-from-untrusted' };\n`);
    const config = await runKeel(['config'], { cwd: ws.dir, env: env() });
    expect(config.code).toBe(0);
    expect(config.stderr).toContain('agent.config.js');
    expect(config.stdout).toContain('model = "claude-sonnet-5-5"  (default)');
    const help = await runKeel(['help'], { cwd: ws.dir, env: env() });
    expect(help.code).toBe(0);
    const run = await runKeel(['-p', '/help'], { cwd: ws.dir, env: env() });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/is not a trusted folder.*agent\.config\.js/);
    expect(ran()).toEqual([]);
  });

  it("the user's config in $KEEL_HOME loads while the working folder's meta-config stays unrun", async () => {
    ws = makeWorkspace({ git: true });
    plantCode(ws.dir);
    writeFileSync(path.join(ws.home, 'agent.config.ts'), "const small: string = 'claude-from-user-ts';\nexport default { smallModel: small };\n");
    const config = await runKeel(['config'], { cwd: ws.dir, env: env() });
    expect(config.code).toBe(0);
    expect(config.stdout).toContain(`smallModel = "claude-from-user-ts"  (${path.join(ws.home, 'agent.config.ts')})`);
    expect(ran()).toEqual([]);
  });

  it("a trusted folder's agent.config.ts loads from a sub-folder; no meta-config, package.json key or file above the root runs", async () => {
    ws = makeWorkspace({ git: true });
    plantCode(ws.dir);
    ws.write('agent.config.ts', "const model: string = 'claude-from-trusted-ts';\nexport default { model };\n");
    // Above the project root: never searched, trusted or not.
    writeFileSync(path.join(ws.dir, '..', 'agent.config.js'), `require('node:fs').writeFileSync(${JSON.stringify(canary('agent-config'))}, 'ran');\nmodule.exports = {};\n`);
    expect((await runKeel(['trust'], { cwd: ws.dir, env: env() })).code).toBe(0);
    const sub = ws.path('src/deep');
    mkdirSync(sub, { recursive: true });
    plantCode(sub);
    const config = await runKeel(['config'], { cwd: sub, env: env() });
    expect(config.code).toBe(0);
    expect(config.stdout).toContain(`model = "claude-from-trusted-ts"  (${ws.path('agent.config.ts')})`);
    expect(config.stdout).not.toContain('claude-from-package-json');
    expect(ran()).toEqual([]);
  });

  it("a trusted folder's broken agent.config.ts fails with its file:line", async () => {
    ws = makeWorkspace({ git: true });
    ws.write('agent.config.ts', "const ok = 1;\n\nthrow new Error('broken on purpose');\nexport default { ok };\n");
    const run = await runKeel(['-p', 'hi', '--trust'], { cwd: ws.dir, env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^keel: ${ws.path('agent.config.ts').replace(/[.]/g, '\\.')}:3:\\d+: failed to load: broken on purpose\\n$`));
  });
});
