import { readFileSync, realpathSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, startSession, type Kernel, type ModeContext } from '../../../kernel/index.js';
import denialLog from '../../../plugins/denial-log/index.js';
import instructions from '../../../plugins/instructions/index.js';
import memoryIndex from '../../../plugins/memory-index/index.js';
import permissions from '../../../plugins/permissions/index.js';
import queryAnthropic from '../../../plugins/query-anthropic/index.js';
import sessionStore from '../../../plugins/session-store/index.js';
import toolBash from '../../../plugins/tool-bash/index.js';
import usage from '../../../plugins/usage/index.js';
import { Controller } from '../../../plugins/ui-ink/controller.js';
import { glyphsFor } from '../../../plugins/ui-ink/glyphs.js';
import { History, historyFile } from '../../../plugins/session-store/prompt-history.js';
import { QuestionQueue } from '../../../plugins/ui-ink/questions.js';
import { makePaint } from '../../../plugins/ui-ink/style.js';
import { Transcript } from '../../../plugins/ui-ink/transcript.js';
import { callTool, say, startAnthropicServer, type ScriptedServer } from '../../helpers/anthropic-server.js';
import { testKernel } from '../../helpers/kernel.js';
import { makeWorkspace, type Workspace } from '../../helpers/workspace.js';

let ws: Workspace | undefined;
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  ws?.cleanup();
});

async function setup(script = [say('ok')], clock?: () => number) {
  ws = makeWorkspace({ git: true });
  server = await startAnthropicServer(script);
  const root = realpathSync(ws.dir);
  const questions = new QuestionQueue();
  // As the plugin's index.ts does: the model's questions go to this UI's queue.
  const askHere = definePlugin(() => ({ name: 'test-ui', kernel: '^1.0.0', apply: (k) => void k.hooks.askUser.tapPromise('test-ui', async (q) => questions.ask(q)) }));
  const kernel: Kernel = testKernel([queryAnthropic(), usage(), permissions(), denialLog(), toolBash(), instructions(), memoryIndex(), sessionStore({ fsync: false }), askHere()], {
    baseURL: server.url,
    keelHome: ws.home,
    cwd: root,
    projectRoot: root,
  });
  const paint = makePaint(false);
  const transcript = new Transcript({ paint, glyphs: glyphsFor({ LANG: 'C.UTF-8' }), width: () => 80, frameMs: 1, now: clock });
  const lines: string[] = [];
  let key = -1;
  transcript.subscribe(() => {
    if (transcript.frame.staticKey !== key) lines.push(...transcript.frame.staticItems.map((i) => i.text));
    key = transcript.frame.staticKey;
  });
  kernel.observe((e) => transcript.onEvent(e));
  const ctx = { kernel, options: {}, startSession: (o?: object) => startSession(kernel, { ...o }) } as unknown as ModeContext;
  const controller = new Controller(kernel, ctx, transcript, questions, new History(historyFile(ws.home, root)), paint);
  controller.session = await ctx.startSession();
  const shown = async () => {
    await new Promise((r) => setTimeout(r, 10));
    return lines.join('\n');
  };
  return { kernel, controller, questions, transcript, shown, root };
}

describe('what Enter does in the Ink UI', () => {
  it('!cmd runs the user\'s shell command without asking, shows its output and adds it to the conversation', async () => {
    const { controller, questions, shown } = await setup();
    let asked = false;
    questions.subscribe(() => {
      if (questions.current) asked = true;
    });
    expect(await controller.submit('!echo from-the-shell')).toBe('continue');
    expect(asked).toBe(false);
    expect(await shown()).toMatch(/! echo from-the-shell[\s\S]*⎿ from-the-shell/);
    expect(JSON.stringify(controller.session.messages.at(-1))).toContain('<bash-input>echo from-the-shell</bash-input>');
  });

  it('#note appends to the memory index', async () => {
    const { controller, shown, root } = await setup();
    await controller.submit('#the tests need Node 20');
    expect(readFileSync(`${root}/.keel/MEMORY.md`, 'utf8')).toBe('- the tests need Node 20\n');
    expect(await shown()).toContain('Noted in');
  });

  it('/help lists the UI commands and the registry, /clear starts a new session, an unknown command is named', async () => {
    const { controller, shown } = await setup();
    await controller.submit('/help');
    const first = controller.session.id;
    await controller.submit('/clear');
    await controller.submit('/nope');
    expect(await controller.submit('/exit')).toBe('exit');
    const text = await shown();
    expect(text).toMatch(/\/clear +start a new session/);
    expect(text).toContain('Ctrl+O show the full output of collapsed tool results');
    expect(text).toMatch(/\/cost +show the tokens/);
    expect(text).toMatch(/\/permissions +show the permission mode/);
    expect(text).toContain('Unknown command /nope; /help lists them');
    expect(controller.session.id).not.toBe(first);
  });

  it('prompts sent while a turn runs wait for it and run in order', async () => {
    const { controller, shown } = await setup([say('first answer'), say('second answer')]);
    await Promise.all([controller.submit('one'), controller.submit('two')]);
    expect(await shown()).toMatch(/> one\nfirst answer[\s\S]*> two\nsecond answer/);
  });

  it('a permission question stops the turn\'s clock until it is answered', async () => {
    let now = 0;
    const { controller, questions, transcript } = await setup([callTool('bash', { command: 'echo hi' }), say('done')], () => now);
    const asked = new Promise<void>((resolve) => questions.subscribe(() => questions.current && resolve()));
    const turn = controller.submit('run it');
    await asked;
    now += 60_000;
    expect(transcript.waiting).toBe(true);
    expect(transcript.elapsed()).toBe(0);
    questions.answer({ kind: 'permission', choice: 'allow_once' });
    expect(transcript.waiting).toBe(false);
    now += 3_000;
    expect(transcript.elapsed()).toBe(3_000);
    await turn;
  });
});
