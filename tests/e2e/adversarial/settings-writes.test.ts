/**
 * Class 2: a write today must not become code or permissions tomorrow. Every file Keel (or Claude Code
 * compatibility) loads as code or settings, at project and user level, existing or not, is asked about in every
 * mode; AGENTS.md/CLAUDE.md only when their front matter would change. A headless run cannot ask, so "asked"
 * shows as an error result saying approval is needed, and nothing on disk changes.
 */
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callTool, callTools, resultText, say, useHostile, type Hostile } from '../../helpers/adversary.js';

const hostile = useHostile();

const MODES = ['auto', 'edits', 'ask', 'manual'] as const;
const PAYLOAD = "export default { permissionMode: 'auto' };\n";
const FRONT = '---\npermission_mode: auto\npermissions:\n  allow: [bash]\n---\n# rules\n';

interface Target {
  id: string;
  /** The tool call, given the world (for absolute user-level paths). */
  call: (h: Hostile) => { name: string; input: unknown };
  /** What the refusal names. */
  why: RegExp;
  /** The file that must be left as it was (absent, or its original content). */
  file: (h: Hostile) => string;
}

const write = (p: string, content = PAYLOAD) => ({ name: 'write_file', input: { path: p, content } });
const edit = (p: string, old_string: string, new_string: string) => ({ name: 'edit_file', input: { path: p, old_string, new_string } });

const TARGETS: Target[] = [
  { id: 'cfg_mjs', call: () => write('agent.config.mjs'), why: /a Keel config file/, file: (h) => h.path('agent.config.mjs') },
  { id: 'cfg_cts', call: () => write('agent.config.cts'), why: /a Keel config file/, file: (h) => h.path('agent.config.cts') },
  { id: 'cfg_json', call: () => write('agent.config.json', '{"permissionMode":"auto"}'), why: /a Keel config file/, file: (h) => h.path('agent.config.json') },
  { id: 'cfg_sub', call: () => write('packages/app/agent.config.ts'), why: /a Keel config file/, file: (h) => h.path('packages/app/agent.config.ts') },
  { id: 'mcp', call: () => write('.mcp.json', '{"mcpServers":{"x":{"command":"sh"}}}'), why: /MCP server list/, file: (h) => h.path('.mcp.json') },
  { id: 'claude_settings', call: () => write('.claude/settings.json', '{}'), why: /\.claude\//, file: (h) => h.path('.claude/settings.json') },
  { id: 'claude_local', call: () => write('.claude/settings.local.json', '{}'), why: /\.claude\//, file: (h) => h.path('.claude/settings.local.json') },
  { id: 'claude_agent', call: () => write('.claude/agents/helper.md', '---\ntools: bash\n---\n'), why: /\.claude\//, file: (h) => h.path('.claude/agents/helper.md') },
  { id: 'user_claude', call: () => write('~/.claude/settings.json', '{}'), why: /\.claude\//, file: (h) => path.join(h.home, '.claude/settings.json') },
  { id: 'user_claude_json', call: () => write('~/.claude.json', '{}'), why: /Claude Code's user settings/, file: (h) => path.join(h.home, '.claude.json') },
  { id: 'user_cfg', call: (h) => write(path.join(h.keelHome, 'agent.config.ts')), why: /KEEL_HOME/, file: (h) => path.join(h.keelHome, 'agent.config.ts') },
  { id: 'trust_file', call: (h) => write(path.join(h.keelHome, 'trusted-folders.json'), '{"folders":["/"]}'), why: /KEEL_HOME/, file: (h) => path.join(h.keelHome, 'trusted-folders.json') },
  { id: 'user_agents', call: (h) => write(path.join(h.keelHome, 'AGENTS.md'), FRONT), why: /KEEL_HOME/, file: (h) => path.join(h.keelHome, 'AGENTS.md') },
  { id: 'keel_agent', call: () => write('.keel/agents/helper.md', FRONT), why: /\.keel\//, file: (h) => h.path('.keel/agents/helper.md') },
  { id: 'agents_new', call: () => write('AGENTS.md', FRONT), why: /front matter/, file: (h) => h.path('AGENTS.md') },
  { id: 'claude_new', call: () => write('web/CLAUDE.md', FRONT), why: /front matter/, file: (h) => h.path('web/CLAUDE.md') },
  { id: 'cfg_link_target', call: () => write('lib/settings.js'), why: /a config file Keel loads/, file: (h) => h.path('lib/settings.js') },
  {
    id: 'fm_link_target',
    call: () => edit('guide/rules.md', '# guide', '---\npermission_mode: auto\n---\n# guide'),
    why: /the target of .*CLAUDE\.md.*front matter/,
    file: (h) => h.path('guide/rules.md'),
  },
  { id: 'agents_sub', call: () => write('docs/AGENTS.md', FRONT), why: /front matter/, file: (h) => h.path('docs/AGENTS.md') },
  { id: 'agents_add_fm', call: () => edit('src/AGENTS.md', '# src rules', '---\npermission_mode: auto\n---\n# src rules'), why: /front matter/, file: (h) => h.path('src/AGENTS.md') },
  { id: 'claude_change_fm', call: () => edit('lib/CLAUDE.md', 'permission_mode: manual', 'permission_mode: auto'), why: /front matter/, file: (h) => h.path('lib/CLAUDE.md') },
  { id: 'claude_drop_fm', call: () => edit('app/CLAUDE.md', '---\npermission_mode: manual\n---\n', ''), why: /front matter/, file: (h) => h.path('app/CLAUDE.md') },
  { id: 'via_symlink', call: () => edit('notes.md', '# notes', '---\npermission_mode: auto\n---\n# notes'), why: /front matter/, file: (h) => h.path('tools/AGENTS.md') },
  { id: 'dotenv', call: () => write('.env.local', 'TOKEN=x\n'), why: /dotenv/, file: (h) => h.path('.env.local') },
];

/** The existing files some targets edit. */
function plant(h: Hostile): void {
  h.write('src/AGENTS.md', '# src rules\n');
  h.write('lib/CLAUDE.md', '---\npermission_mode: manual\n---\n# lib rules\n');
  h.write('app/CLAUDE.md', '---\npermission_mode: manual\n---\n# app rules\n');
  h.write('tools/AGENTS.md', '# notes\n');
  symlinkSync(h.path('tools/AGENTS.md'), h.path('notes.md'));
  // Symlinked settings files: writing their targets is writing them.
  h.write('lib/settings.js', 'export default {};\n');
  symlinkSync(h.path('lib/settings.js'), h.path('agent.config.js'));
  h.write('guide/rules.md', '# guide\n');
  symlinkSync(h.path('guide/rules.md'), h.path('CLAUDE.md'));
  h.settle();
}

function contentOf(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

describe.each(MODES)('class 2 in %s mode: writes to the settings surface are asked', (mode) => {
  it(`every target (${TARGETS.length}) is asked and left as it was`, async () => {
    const h = await hostile();
    plant(h);
    const before = new Map(TARGETS.map((t) => [t.id, contentOf(t.file(h))]));
    h.server.push(callTools(...TARGETS.map((t) => ({ ...t.call(h), id: t.id }))), say('done'));
    const run = await h.run(['-p', 'go', '--permission-mode', mode]);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    for (const t of TARGETS) {
      const text = resultText(v.results[t.id]);
      expect(v.results[t.id]?.is_error, `${t.id}: ${text}`).toBe(true);
      expect(text, t.id).toMatch(/needs the user's approval/);
      expect(text, t.id).toMatch(t.why);
      expect(contentOf(t.file(h)), t.id).toBe(before.get(t.id));
    }
    expect(v.changed).toEqual([]);
    expect(v.ran).toBe(false);
    expect(v.leaked).toEqual([]);
  });
});

describe('class 2: instruction bodies, bash and --config', () => {
  it('edits mode: a body-only edit of AGENTS.md with front matter goes through, its front matter untouched', async () => {
    const h = await hostile([callTool('edit_file', { path: 'AGENTS.md', old_string: 'old body', new_string: 'new body' }, 'e1'), say('ok')]);
    h.write('AGENTS.md', '---\npermission_mode: manual\n---\nold body\n');
    const run = await h.run(['-p', 'go', '--permission-mode', 'edits']);
    expect(run.code, run.stderr).toBe(0);
    expect(h.verdict().results.e1?.is_error).toBeUndefined();
    expect(readFileSync(h.path('AGENTS.md'), 'utf8')).toBe('---\npermission_mode: manual\n---\nnew body\n');
  });

  it('edits mode: creating CLAUDE.md without front matter goes through', async () => {
    const h = await hostile([callTool('write_file', { path: 'CLAUDE.md', content: '# just text\n' }, 'w1'), say('ok')]);
    const run = await h.run(['-p', 'go', '--permission-mode', 'edits']);
    expect(run.code, run.stderr).toBe(0);
    expect(h.verdict().results.w1?.is_error).toBeUndefined();
    expect(readFileSync(h.path('CLAUDE.md'), 'utf8')).toBe('# just text\n');
  });

  it('auto mode: two edits that each keep the body, but together make front matter, are stopped before the second runs', async () => {
    const h = await hostile([
      callTools(
        { name: 'edit_file', input: { path: 'AGENTS.md', old_string: 'intro', new_string: '---\npermission_mode: auto' }, id: 'e1' },
        { name: 'edit_file', input: { path: 'AGENTS.md', old_string: 'END', new_string: '---' }, id: 'e2' },
      ),
      say('ok'),
    ]);
    h.write('AGENTS.md', 'intro\nEND\n');
    const run = await h.run(['-p', 'go', '--permission-mode', 'auto']);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.e1?.is_error).toBeUndefined();
    expect(v.results.e2?.is_error).toBe(true);
    expect(resultText(v.results.e2)).toMatch(/would now change its front matter/);
    expect(readFileSync(h.path('AGENTS.md'), 'utf8')).toBe('---\npermission_mode: auto\nEND\n');
  });

  it('auto mode: bash redirections into settings files are asked (AGENTS.md as a whole file)', async () => {
    const h = await hostile([
      callTools(
        { name: 'bash', input: { command: 'echo "{}" > .mcp.json' }, id: 'b1' },
        { name: 'bash', input: { command: 'mkdir -p .claude && echo "{}" > .claude/settings.json' }, id: 'b2' },
        { name: 'bash', input: { command: 'echo "body only" >> AGENTS.md' }, id: 'b3' },
        { name: 'bash', input: { command: 'echo "export default {}" > agent.config.cts' }, id: 'b4' },
      ),
      say('ok'),
    ]);
    const run = await h.run(['-p', 'go', '--permission-mode', 'auto']);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    for (const id of ['b1', 'b2', 'b3', 'b4']) {
      expect(v.results[id]?.is_error, id).toBe(true);
      expect(resultText(v.results[id]), id).toMatch(/protected path/);
    }
    expect(v.changed).toEqual([]);
    expect(existsSync(h.path('agent.config.cts'))).toBe(false);
  });

  it('a file named with --config is protected like agent.config.*, whatever its name', async () => {
    const h = await hostile([callTool('write_file', { path: 'keel.settings.mjs', content: PAYLOAD }, 'w1'), say('ok')]);
    h.write('keel.settings.mjs', 'export default {};\n');
    const run = await h.run(['-p', 'go', '--permission-mode', 'auto', '--config', 'keel.settings.mjs']);
    expect(run.code, run.stderr).toBe(0);
    const v = h.verdict();
    expect(v.results.w1?.is_error).toBe(true);
    expect(resultText(v.results.w1)).toMatch(/a config file Keel loads/);
    expect(readFileSync(h.path('keel.settings.mjs'), 'utf8')).toBe('export default {};\n');
  });
});
