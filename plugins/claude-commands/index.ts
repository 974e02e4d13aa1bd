/**
 * Claude Code's everyday commands that no other plugin owns: `/export [file]` (the conversation as Markdown),
 * `/context` (what fills the context window), `/review [PR]` (a review prompt with the diff) and `/login` (store
 * an API key). Each command's code is a cold part, loaded when it runs.
 */
import path from 'node:path';
import { auxiliaryTurn, definePlugin, runAgent } from '../../kernel/index.js';
import type { FileCreator } from './export.js';

const NAME = 'claude-commands';

/** What `/login` needs from the `auth` service (plugin query-anthropic), when the preset has it. */
interface Auth {
  verify?(apiKey: string): Promise<void>;
  use?(apiKey: string): void;
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  apply(kernel) {
    kernel.commands.register({
      name: 'export',
      description: 'the conversation as Markdown: /export <file> writes it to a file (never over one), /export alone prints it',
      async run(args, { session }) {
        const { conversationMarkdown, writeExport } = await import('./cold.js');
        const markdown = conversationMarkdown(session);
        const given = args.trim().replace(/^(["'])(.*)\1$/, '$2');
        if (!given) return markdown;
        const files = kernel.services.get('safe-files') as Partial<FileCreator> | undefined;
        if (typeof files?.create !== 'function' || typeof files.realTarget !== 'function') {
          throw new Error("writing a file needs the file tools' safe-files service (plugin tools-fs), which this agent does not have; /export alone prints the conversation");
        }
        const file = path.resolve(session.cwd, given);
        await writeExport(files as FileCreator, file, markdown);
        return `Exported ${session.messages.length} messages to ${file}`;
      },
    });

    kernel.commands.register({
      name: 'context',
      description: 'what fills the context window: system prompt, tools, memory files, skills, messages',
      async run(_args, { session }) {
        const { formatContext, measureContext } = await import('./cold.js');
        const colour = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
        return formatContext(await measureContext(kernel, session), { colour });
      },
    });

    kernel.commands.register({
      name: 'review',
      description: 'have the model review the uncommitted changes, or a pull request (/review <number>, needs gh); more words say what to focus on',
      async run(args, { session, signal }) {
        const { localChanges, pullRequest, reviewPrompt } = await import('./cold.js');
        const match = /^#?(\d+)\b\s*([\s\S]*)$/.exec(args.trim());
        const subject = match ? await pullRequest(match[1]!, session.cwd, signal) : await localChanges(session.cwd, signal);
        const run = await runAgent(kernel, session, reviewPrompt(subject, (match ? match[2]! : args).trim()), { signal });
        if (run.isError) throw new Error(run.error ?? run.subtype);
        return run.result;
      },
    });

    kernel.commands.register({
      name: 'login',
      description: 'store an Anthropic API key in $KEEL_HOME/auth.json (checked with the API first); this session uses it at once',
      async run(_args, { session, signal }) {
        const answer = await kernel.hooks.askUser.promise(
          { kind: 'text', prompt: `Anthropic API key (stored in ${path.join(kernel.config.keelHome, 'auth.json')})`, secret: true },
          auxiliaryTurn(kernel, session, signal),
        );
        const key = answer?.kind === 'text' ? answer.text.trim() : '';
        if (!key) throw new Error('no key entered; nothing changed (in a script, run: echo "$KEY" | keel login)');
        const auth = kernel.services.get('auth') as Auth | undefined;
        if (typeof auth?.verify === 'function') {
          try {
            await auth.verify(key);
          } catch (err) {
            throw new Error(`the key was refused, so it was not stored: ${err instanceof Error ? err.message : String(err)}`);
          }
        }
        const { storeApiKey } = await import('./cold.js');
        const file = await storeApiKey(kernel.config.keelHome, key);
        const now = typeof auth?.use === 'function';
        auth?.use?.(key);
        return `Key stored in ${file}${auth?.verify ? ' (checked with the API)' : ''}; ${now ? 'this session uses it now' : 'Keel uses it from its next start'}.`;
      },
    });
  },
}));
