/**
 * Every plugin that reads a Markdown file by name from the project — instructions (`AGENTS.md`), skills (`SKILL.md`),
 * custom commands, output styles, agent files and the memory index — reads it through one reader (the `project-files` service of
 * plugin `instructions`). Each fault below is planted at each consumer's file and the built CLI run: the consumer
 * must refuse it with one line naming the file, hang on nothing, and send nothing of it to the model.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, ftruncateSync, linkSync, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { say, SECRETS, useHostile, type Hostile } from '../../helpers/adversary.js';

const hostile = useHostile();

interface Consumer {
  name: string;
  /** Where the consumer looks for its file, relative to the project. */
  file: string;
  /** A valid file of the consumer's format whose text reaches a request when it is loaded. */
  text(marker: string): string;
  /** The prompt that makes the file's text reach the request. */
  prompt: string;
  /** What the warning naming the file starts with (before the reason). */
  warning: string;
  /** The exit code when the file is refused. */
  refusedCode: number;
  /** Files of the project this consumer needs beside its own (to select it). */
  extra?: Record<string, string>;
  /** Reads an untrusted project's files at all (output styles and agents do not). */
  readsUntrusted: boolean;
  /** Looks only among regular files, so a FIFO is passed over before the reader sees it (AGENTS.md, SKILL.md). */
  findsOnlyFiles?: boolean;
  /** A larger file is cut to its first 1 MiB, not refused (the memory index: the prompt shows its head anyway). */
  cutsLargeFiles?: boolean;
  /** Confined to the project even when it is trusted (Keel's own `.keel/`): a link outside is refused first. */
  confinedAlways?: boolean;
}

const CONSUMERS: Consumer[] = [
  { name: 'instructions', file: 'AGENTS.md', text: (m) => `Follow ${m}.\n`, prompt: 'hello', warning: 'AGENTS\\.md: ', refusedCode: 0, readsUntrusted: true, findsOnlyFiles: true },
  {
    name: 'skills',
    file: '.claude/skills/peek/SKILL.md',
    text: (m) => `---\nname: peek\ndescription: Peek at ${m}.\n---\nbody\n`,
    prompt: 'hello',
    warning: 'skill not loaded: .*SKILL\\.md: ',
    refusedCode: 0,
    readsUntrusted: true,
    findsOnlyFiles: true,
  },
  // An unknown command stops the run (exit 2) before any request.
  { name: 'custom-commands', file: '.claude/commands/peek.md', text: (m) => `Say ${m}.\n`, prompt: '/peek', warning: 'command not loaded: .*peek\\.md: ', refusedCode: 2, readsUntrusted: true },
  {
    name: 'output-styles',
    file: '.claude/output-styles/peek.md',
    text: (m) => `---\nname: peek\n---\nWrite like ${m}.\n`,
    prompt: 'hello',
    warning: 'output style not loaded: .*peek\\.md: ',
    refusedCode: 0,
    extra: { '.claude/settings.json': JSON.stringify({ outputStyle: 'peek' }) },
    readsUntrusted: false,
  },
  {
    name: 'tool-agent',
    file: '.claude/agents/peek.md',
    text: (m) => `---\nname: peek\ndescription: Knows ${m}.\n---\nYou peek.\n`,
    prompt: 'hello',
    warning: 'agent file skipped: .*peek\\.md: ',
    refusedCode: 0,
    readsUntrusted: false,
  },
  { name: 'memory-index', file: '.keel/MEMORY.md', text: (m) => `- ${m} → memory/x.md\n`, prompt: 'hello', warning: 'MEMORY\\.md: ', refusedCode: 0, readsUntrusted: true, cutsLargeFiles: true, confinedAlways: true },
];

function plant(h: Hostile, c: Consumer, target: string, how: 'symlink' | 'hardlink' = 'symlink'): void {
  const at = h.path(c.file);
  mkdirSync(path.dirname(at), { recursive: true });
  if (how === 'symlink') symlinkSync(target, at);
  else linkSync(target, at);
  for (const [file, text] of Object.entries(c.extra ?? {})) h.write(file, text);
  h.settle();
}

function sent(h: Hostile): string {
  return h.server.messageRequests().map((r) => JSON.stringify(r.body)).join('\n');
}

describe.each(CONSUMERS)('$name reads its project file through the one safe reader', (c) => {
  it('control: a plain file loads and its text reaches the request (so the refusals below are not an accident)', async () => {
    const h = await hostile([say('ok')]);
    h.write(c.file, c.text(`CONTROL-${c.name}`));
    for (const [file, text] of Object.entries(c.extra ?? {})) h.write(file, text);
    const run = await h.run(['-p', c.prompt, '--trust']);
    expect(run.code, run.stderr).toBe(0);
    expect(sent(h)).toContain(`CONTROL-${c.name}`);
  });

  it('trusted: a link to a canary secret outside the workspace (~/.ssh) is refused as a secret', async () => {
    const h = await hostile([say('ok')]);
    const secret = path.join(h.home, '.ssh', `${c.name}.md`);
    writeFileSync(secret, c.text(SECRETS.sshKey));
    plant(h, c, secret);
    const run = await h.run(['-p', c.prompt, '--trust']);
    expect(run.code, run.stderr).toBe(c.refusedCode);
    expect(run.stderr).toMatch(new RegExp(`${c.warning}not read: .*SSH keys`));
    expect(h.verdict().leaked).toEqual([]);
  });

  it('trusted: a link to a FIFO outside the workspace hangs nothing and is not read', async () => {
    const h = await hostile([say('ok')]);
    const fifo = path.join(h.outside, 'pipe');
    execFileSync('mkfifo', [fifo]);
    plant(h, c, fifo);
    const run = await h.run(['-p', c.prompt, '--trust'], { timeoutMs: 30_000 });
    expect(run.code, run.stderr).toBe(c.refusedCode);
    const reason = c.confinedAlways ? 'is outside the project' : 'is not a regular file';
    if (!c.findsOnlyFiles) expect(run.stderr).toMatch(new RegExp(`${c.warning}not read: .* ${reason}`));
  });

  it('trusted: a file larger than the limit (3 GB, sparse) is refused with one line (or cut), never read whole', async () => {
    const h = await hostile([say('ok')]);
    const file = h.write(c.file, c.text('HEAD-OF-HUGE'));
    for (const [extra, text] of Object.entries(c.extra ?? {})) h.write(extra, text);
    const fd = openSync(file, 'r+');
    ftruncateSync(fd, 3 * 1024 * 1024 * 1024);
    closeSync(fd);
    const run = await h.run(['-p', c.prompt, '--trust'], { timeoutMs: 30_000 });
    if (c.cutsLargeFiles) {
      expect(run.code, run.stderr).toBe(0);
      expect(sent(h)).toContain('HEAD-OF-HUGE');
      return;
    }
    // A trusted AGENTS.md may hold rules in its front matter: Keel does not start without it.
    expect(run.code, run.stderr).toBe(c.name === 'instructions' ? 2 : c.refusedCode);
    expect(run.stderr).toMatch(new RegExp(`${c.warning}not read: .*larger than`));
    expect(sent(h)).not.toContain('HEAD-OF-HUGE');
  });

  it("untrusted: a link to a file outside the project is not read", async () => {
    const h = await hostile([say('ok')]);
    const outside = path.join(h.outside, `${c.name}.md`);
    writeFileSync(outside, c.text(SECRETS.outside));
    plant(h, c, outside);
    const run = await h.run(['-p', c.prompt]);
    expect(run.code, run.stderr).toBe(c.readsUntrusted ? c.refusedCode : 0);
    if (c.readsUntrusted) expect(run.stderr).toMatch(new RegExp(`${c.warning}(not read: )?.*outside the (untrusted )?project`));
    expect(h.verdict().leaked).toEqual([]);
  });

  it('untrusted: a hard link to a file outside the project is not read', async () => {
    const h = await hostile([say('ok')]);
    const outside = path.join(h.outside, `${c.name}.md`);
    writeFileSync(outside, c.text(SECRETS.outside));
    plant(h, c, outside, 'hardlink');
    const run = await h.run(['-p', c.prompt]);
    expect(run.code, run.stderr).toBe(c.readsUntrusted ? c.refusedCode : 0);
    if (c.readsUntrusted) expect(run.stderr).toMatch(new RegExp(`${c.warning}(not read: )?.*2 hard links`));
    expect(h.verdict().leaked).toEqual([]);
  });
});
