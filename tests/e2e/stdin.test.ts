/**
 * Standard input as a shell redirect gives it: a file (`keel -p "…" < notes.txt`) or /dev/null (a CI job) is read
 * directly from fd 0; a pipe as a stream. Each way the prompt reaches the model the same.
 */
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { say } from '../helpers/anthropic-server.js';
import { runKeel } from '../helpers/cli.js';
import { useScriptedProjects } from '../helpers/project.js';

const prepare = useScriptedProjects();
const firstPrompt = (body: { messages: Array<{ content: unknown }> }) => JSON.stringify(body.messages[0].content);

describe('stdin', () => {
  it('appends a file given as stdin to the -p prompt, and reads a prompt from a file alone', async () => {
    const { ws, env, server } = await prepare([say('one'), say('two')]);
    const file = ws.path('log.txt');
    writeFileSync(file, 'ERROR disk full\nline two ✓\n');
    for (const args of [['-p', 'explain this log:'], ['-p']]) {
      const fd = openSync(file, 'r');
      try {
        const run = await runKeel(args, { cwd: ws.dir, env, stdinFd: fd });
        expect(run.code, run.stderr).toBe(0);
      } finally {
        closeSync(fd);
      }
    }
    const [withArg, alone] = server.messageRequests().map((r) => firstPrompt(r.body));
    expect(withArg).toContain('explain this log:\\n\\nERROR disk full\\nline two ✓');
    expect(alone).toContain('ERROR disk full\\nline two ✓');
  });

  it('takes /dev/null as no input: the argument alone, or a one-line error without one', async () => {
    const { ws, env, server } = await prepare([say('fine')]);
    const fd = openSync('/dev/null', 'r');
    try {
      const ok = await runKeel(['-p', 'just this'], { cwd: ws.dir, env, stdinFd: fd });
      expect(ok.stdout).toBe('fine\n');
      expect(firstPrompt(server.messageRequests()[0].body)).toContain('just this');
      const none = await runKeel(['-p'], { cwd: ws.dir, env, stdinFd: fd });
      expect(none.code).toBe(2);
      expect(none.stderr).toBe('keel: no prompt: pass one after -p or pipe it on stdin\n');
    } finally {
      closeSync(fd);
    }
  });
});
