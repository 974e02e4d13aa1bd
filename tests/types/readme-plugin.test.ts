/** The README's "Writing a plugin" example works as printed: it type-checks, seals with a preset and runs. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createJiti } from 'jiti';
import { afterAll, describe, expect, it } from 'vitest';
import { createKernel, defaultConfig, startSession, type Plugin } from '../../kernel/index.js';
import { loadPreset } from '../../presets/index.js';
import { makeWorkspace } from '../helpers/workspace.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ws = makeWorkspace();
afterAll(() => ws.cleanup());

function example(): string {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Writing a plugin'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README: no ts block under "Writing a plugin"');
  return block[1]!;
}

describe("the README's plugin example", () => {
  it('is at most about 20 lines and type-checks under strict settings', () => {
    const code = example();
    expect(code.trim().split('\n').length).toBeLessThanOrEqual(22);
    const file = ws.write('hello.ts', code);
    writeFileSync(
      ws.path('tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, skipLibCheck: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'], typeRoots: [path.join(root, 'node_modules', '@types')], paths: { keel: [path.join(root, 'kernel/index.ts')] } },
        files: [file],
      }),
    );
    const out = (() => {
      try {
        return execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', ws.path('tsconfig.json')], { encoding: 'utf8' });
      } catch (err) {
        return String((err as { stdout?: string }).stdout ?? err);
      }
    })();
    expect(out).toBe('');
  });

  it('seals with the minimal preset and its tool answers', async () => {
    const file = ws.write('hello-run.ts', example());
    const jiti = createJiti(import.meta.url, { alias: { keel: path.join(root, 'kernel/index.ts') } });
    const mod = (await jiti.import(file)) as { default: (opts?: { greeting?: string }) => Plugin };
    const kernel = createKernel({ config: defaultConfig({ cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home }) });
    for (const plugin of (await loadPreset('minimal'))!.plugins) kernel.use(plugin);
    kernel.use(mod.default({ greeting: 'Ahoy' })).seal();
    const session = await startSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
    const tool = kernel.tools.get('hello')!;
    const signal = new AbortController().signal;
    const turn = { session, kernel, index: 1, signal, data: new Map(), emit: () => undefined };
    const result = await tool.execute(tool.input.parse({ name: 'Keel' }), { signal, session, turn, call: { id: 'c', name: 'hello', input: {} }, kernel, cwd: ws.dir, emit: () => undefined });
    expect(result.content).toBe('Ahoy, Keel!');
  });

  it('the command, hook and service example seals, counts a tool call and answers its command', async () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### Writing a plugin'));
    const code = [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((c) => c.includes("name: 'counter'"));
    expect(code).toBeDefined();
    const file = ws.write('counter.ts', code!);
    const jiti = createJiti(import.meta.url, { alias: { keel: path.join(root, 'kernel/index.ts') } });
    const mod = (await jiti.import(file)) as { default: () => Plugin };
    const kernel = createKernel({ config: defaultConfig({ cwd: ws.dir, projectRoot: ws.dir, keelHome: ws.home }) });
    for (const plugin of (await loadPreset('minimal'))!.plugins) kernel.use(plugin);
    kernel.use(mod.default()).seal();
    const session = await startSession(kernel, { cwd: ws.dir, projectRoot: ws.dir });
    kernel.emit({ type: 'tool_end', call: { id: 'c', name: 'ls', input: {} }, result: { content: '' }, durationMs: 1 });
    expect((kernel.services.get('counter') as { count(): number }).count()).toBe(1);
    expect(await kernel.commands.get('calls')!.run('', { kernel, session, print: () => undefined, signal: new AbortController().signal })).toBe('Tool calls so far: 1');
  });
});
