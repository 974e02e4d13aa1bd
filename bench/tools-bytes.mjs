// Request weight: bytes of the `tools` array each request carries, of `system`, and of the whole first request, per preset, read from what a loopback server received,
// beside Claude Code's 30.9 KB per request (DESIGN.md). Every byte is paid on every turn.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const jiti = createJiti(import.meta.url);
const { startAnthropicServer, say } = await jiti.import(path.join(root, 'tests/helpers/anthropic-server.ts'));

function run(args, env, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bin', 'keel.js'), ...args], { env, cwd, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`keel ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

const CLAUDE_CODE_BYTES = 30.9 * 1024;
console.log('tools array per request (JSON bytes)');
for (const preset of ['minimal', 'headless', 'default']) {
  const server = await startAnthropicServer([say('ok')]);
  const home = mkdtempSync(path.join(tmpdir(), 'keel-bench-'));
  try {
    await run(['--preset', preset, '-p', 'hi'], { PATH: process.env.PATH, KEEL_HOME: home, ANTHROPIC_API_KEY: 'bench', ANTHROPIC_BASE_URL: server.url }, home);
    const body = server.messageRequests()[0].body;
    const tools = body.tools ?? [];
    const bytes = Buffer.byteLength(JSON.stringify(tools));
    const kb = (value) => `${(Buffer.byteLength(JSON.stringify(value ?? null)) / 1024).toFixed(1).padStart(5)} KB`;
    console.log(
      `${preset.padEnd(9)} ${String(tools.length).padStart(3)} tools  ${(bytes / 1024).toFixed(1).padStart(5)} KB   ×${(bytes / CLAUDE_CODE_BYTES).toFixed(2)} Claude Code (30.9 KB)   system ${kb(body.system)}   first request ${kb(body)}`,
    );
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
}
