import { chmodSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { callTool, say, type ScriptedServer } from '../helpers/anthropic-server.js';
import { useScriptedProjects } from '../helpers/project.js';
import { KEEL_BIN, ndjson, runKeel } from '../helpers/cli.js';

const prepare = useScriptedProjects();

/** The tool_result blocks the model received in request `index`. */
function resultsIn(srv: ScriptedServer, index: number): Array<{ content: unknown; is_error?: boolean }> {
  const messages = srv.messageRequests()[index].body.messages as Array<{ role: string; content: unknown }>;
  const last = messages[messages.length - 1].content as Array<{ type: string; content: unknown; is_error?: boolean }>;
  return last.filter((b) => b.type === 'tool_result');
}

const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content));

describe('built-in tools through the CLI', () => {
  it('reads a file, edits it, runs cat on it and answers, leaving the file edited', async () => {
    const { env, ws, server } = await prepare([
      callTool('read_file', { path: 'notes.txt' }),
      callTool('edit_file', { path: 'notes.txt', old_string: 'hello world', new_string: 'hello keel' }),
      callTool('bash', { command: 'cat notes.txt' }),
      say('The file now says "hello keel".'),
    ]);
    ws.write('notes.txt', 'hello world\nsecond line\n');
    const run = await runKeel(['-p', 'change world to keel in notes.txt', '--permission-mode', 'auto', '--output-format', 'stream-json'], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(readFileSync(ws.path('notes.txt'), 'utf8')).toBe('hello keel\nsecond line\n');

    expect(text(resultsIn(server, 1)[0].content)).toBe('     1\thello world\n     2\tsecond line');
    expect(text(resultsIn(server, 2)[0].content)).toContain('-hello world\n+hello keel');
    expect(resultsIn(server, 3)[0]).toMatchObject({ content: 'hello keel\nsecond line' });
    for (const i of [1, 2, 3]) expect(resultsIn(server, i)[0].is_error).toBeUndefined();

    const messages = ndjson(run.stdout);
    expect(messages[messages.length - 1]).toMatchObject({ type: 'result', subtype: 'success', result: 'The file now says "hello keel".', num_turns: 4 });
  });

  it('sends the built-in tools in at most 15 KB, with web_fetch deferred', async () => {
    const { env, ws, server } = await prepare([say('ok')]);
    const run = await runKeel(['-p', 'hi', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const tools = server.messageRequests()[0].body.tools as Array<{ name: string }>;
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep', 'ls', 'todo_write', 'tool_search']));
    expect(names).not.toContain('web_fetch');
    expect(Buffer.byteLength(JSON.stringify(tools))).toBeLessThanOrEqual(15 * 1024);
  });

  it('edit_file leaves a Latin-1 file byte for byte as it was, and a rewrite of a 20 000-line file still answers', async () => {
    const lines = (tag: string) => Array.from({ length: 20_000 }, (_, i) => `${tag} ${i}`).join('\n') + '\n';
    const { env, ws, server } = await prepare([
      callTool('edit_file', { path: 'legacy.txt', old_string: 'version = 1', new_string: 'version = 2' }),
      callTool('read_file', { path: 'big.txt', limit: 1 }),
      callTool('write_file', { path: 'big.txt', content: lines('new') }),
      say('done'),
    ]);
    const latin1 = Buffer.from('version = 1\nauthor = "Andr\xe9 Gar\xe7on"\n', 'latin1');
    writeFileSync(ws.path('legacy.txt'), latin1);
    ws.write('big.txt', lines('old'));
    const run = await runKeel(['-p', 'bump the version', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(readFileSync(ws.path('legacy.txt')).equals(latin1)).toBe(true);
    const [refused] = resultsIn(server, 1);
    expect(refused.is_error).toBe(true);
    expect(text(refused.content)).toMatch(/^edit_file: legacy\.txt was left as it is: it is not valid UTF-8 text .*Change it with bash/);
    expect(resultsIn(server, 3)[0]).toMatchObject({ content: 'Overwrote big.txt (20000 lines).' });
    expect(readFileSync(ws.path('big.txt'), 'utf8')).toBe(lines('new'));
  });

  it('a write that fails part-way (the file size limit: EFBIG) puts the file back as it was, for edit_file and write_file', async () => {
    const original = `${'keep this line\n'.repeat(3000)}marker\n`; // 45 KB, under the 64 KB limit
    const grown = 'x'.repeat(100 * 1024);
    const { env, ws, server } = await prepare([
      callTool('edit_file', { path: 'data.txt', old_string: 'marker', new_string: grown }),
      callTool('read_file', { path: 'data.txt', limit: 1 }),
      callTool('write_file', { path: 'data.txt', content: grown }),
      say('done'),
    ]);
    ws.write('data.txt', original);
    // Each file may hold 64 KB; with SIGXFSZ ignored (an ignored signal stays ignored across exec) a longer write fails with EFBIG.
    const bin = ws.write('limited-keel.sh', `#!/bin/bash\ntrap '' XFSZ\nulimit -f 64\nexec ${JSON.stringify(KEEL_BIN)} "$@"\n`);
    chmodSync(bin, 0o755);
    const run = await runKeel(['-p', 'grow data.txt', '--permission-mode', 'auto'], { cwd: ws.dir, env, bin });
    expect(run.code).toBe(0);
    expect(readFileSync(ws.path('data.txt'), 'utf8')).toBe(original);
    expect(resultsIn(server, 1)[0]).toMatchObject({ is_error: true, content: 'edit_file: data.txt: the write failed (EFBIG); the file was put back as it was.' });
    expect(resultsIn(server, 3)[0]).toMatchObject({ is_error: true, content: 'write_file: data.txt: the write failed (EFBIG); the file was put back as it was.' });
  });

  it('refuses to overwrite a file the session has not read', async () => {
    const { env, ws, server } = await prepare([callTool('write_file', { path: 'keep.txt', content: 'clobbered' }), say('refused')]);
    ws.write('keep.txt', 'precious\n');
    const run = await runKeel(['-p', 'overwrite keep.txt', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    expect(readFileSync(ws.path('keep.txt'), 'utf8')).toBe('precious\n');
    const [result] = resultsIn(server, 1);
    expect(result.is_error).toBe(true);
    expect(text(result.content)).toContain('keep.txt already exists and this session has not read it');
  });

  it('gives the minimal preset the file tools and bash', async () => {
    const { env, ws, server } = await prepare([callTool('grep', { pattern: 'needle', output_mode: 'content' }), say('found')]);
    ws.write('src/hay.ts', 'const needle = 1;\n');
    const run = await runKeel(['-p', 'find needle', '--preset', 'minimal', '--permission-mode', 'auto'], { cwd: ws.dir, env });
    expect(run.code).toBe(0);
    const names = (server.messageRequests()[0].body.tools as Array<{ name: string }>).map((t) => t.name).sort();
    expect(names).toEqual(['bash', 'edit_file', 'glob', 'grep', 'ls', 'read_file', 'write_file']);
    expect(resultsIn(server, 1)[0]).toMatchObject({ content: 'src/hay.ts:1:const needle = 1;' });
  });

  it.each([false, true])('keeps the shell directory between bash calls (sandbox enabled: %s)', async (sandboxed) => {
    const { env, ws, server } = await prepare([
      callTool('bash', { command: 'mkdir -p sub && cd sub' }),
      callTool('bash', { command: 'pwd && echo err >&2' }),
      say('done'),
    ]);
    if (sandboxed) ws.write('agent.config.ts', 'export default { sandbox: { enabled: true } };\n');
    const run = await runKeel(['-p', 'go', '--permission-mode', 'auto', ...(sandboxed ? ['--trust'] : [])], { cwd: ws.dir, env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const sub = realpathSync(ws.path('sub'));
    expect(text(resultsIn(server, 1)[0].content)).toContain(`The shell's working directory is now ${sub}.`);
    expect(resultsIn(server, 2)[0]).toMatchObject({ content: `${sub}\nerr` });
  });
});

