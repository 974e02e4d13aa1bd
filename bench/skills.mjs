// Skills' request weight: bytes 0, 10 and 100 installed skills add to the first request (budget: 6 KB for 100),
// read from what a loopback server received; and the two places the list could go, compared on bytes and on how
// much of the cached prefix adding one skill invalidates (the list in the `skill` tool's description, or the
// system-prompt section Keel uses). Bytes are what is measured; about 4 bytes make a token in English text.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const jiti = createJiti(import.meta.url);
const { startAnthropicServer, say } = await jiti.import(path.join(root, 'tests/helpers/anthropic-server.ts'));
const { installSkills } = await jiti.import(path.join(root, 'tests/helpers/skills.ts'));

function run(args, env, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin', 'keel.js'), ...args], { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`keel ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

/** The first request's body with `count` skills in $KEEL_HOME/skills. */
async function firstRequest(count) {
  const server = await startAnthropicServer([say('ok')]);
  const base = mkdtempSync(path.join(tmpdir(), 'keel-bench-skills-'));
  const keelHome = path.join(base, 'keel-home');
  const project = path.join(base, 'project');
  mkdirSync(path.join(project, '.git'), { recursive: true });
  installSkills(path.join(keelHome, 'skills'), count);
  try {
    await run(['-p', 'hi'], { PATH: process.env.PATH, HOME: path.join(base, 'home'), KEEL_HOME: keelHome, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url }, project);
    return server.messageRequests()[0].body;
  } finally {
    await server.close();
    rmSync(base, { recursive: true, force: true });
  }
}

const bytes = (value) => Buffer.byteLength(JSON.stringify(value));
const kb = (n) => `${(n / 1024).toFixed(2)} KB`;

const none = await firstRequest(0);
console.log('first request, skills in $KEEL_HOME/skills (catalogue-length descriptions, ~200 characters)');
const bodies = {};
for (const count of [10, 100]) {
  bodies[count] = await firstRequest(count);
  const added = bytes(bodies[count]) - bytes(none);
  console.log(`${String(count).padStart(4)} skills  +${kb(added).padStart(9)}  (~${Math.round(added / 4)} tokens)  ${count === 100 ? (added <= 6144 ? 'within' : 'OVER') + ' the 6 KB budget' : ''}`);
}

// The other placement: the same list moved into the skill tool's description.
const body = bodies[100];
const section = body.system.find((b) => b.text.startsWith('# Skills'));
const tool = body.tools.find((t) => t.name === 'skill');
const inSystem = bytes(section) + bytes(tool);
const movedTool = { ...tool, description: `${tool.description}\n\n${section.text.replace(/^# Skills\n[^\n]*\n/, 'Skills:\n')}` };
const inTool = bytes(movedTool);
console.log(`\n100 skills, where the list goes       bytes      prefix rewritten when one skill is added`);
const toolsBytes = bytes(body.tools);
const beforeSection = bytes(body.system.slice(0, body.system.indexOf(section)));
console.log(`system-prompt section (Keel)      ${kb(inSystem).padStart(9)}      from the section on: the tools (${kb(toolsBytes)}) and ${kb(beforeSection)} of system stay cached`);
console.log(`skill tool's description          ${kb(inTool).padStart(9)}      everything: tools come first in the cache prefix`);
