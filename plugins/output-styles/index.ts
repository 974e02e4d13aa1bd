/**
 * Output styles (Claude Code's format): a style replaces the tone section of Keel's base prompt (and, for a
 * style file without `keep-coding-instructions: true`, its coding instructions). Chosen by config
 * `outputStyle` (also `.claude/settings.json`'s) and switched with `/output-style <name>`. The system prompt
 * plugin asks the `output-style` service for the session's style, so the prompt stays byte-stable per style.
 */
import os from 'node:os';
import { definePlugin, z, type Kernel, type Session } from '../../kernel/index.js';
import type { OutputStyle } from './builtin.js';
import { loadStyles, type LoadedStyles } from './load.js';

const NAME = 'output-styles';

declare module '../../kernel/plugin.js' {
  interface KeelConfig {
    /** The output style sessions start with: `default`, `explanatory`, `learning` or a style file's name. */
    outputStyle?: string;
  }
}

/** What the `output-style` service offers (read by `system-prompt`). */
export interface OutputStyleService {
  /** The session's style, or undefined for `default` (Keel's own prompt, unchanged). */
  active(session: Session): Pick<OutputStyle, 'name' | 'prompt' | 'keepCodingInstructions'> | undefined;
}

interface SessionStyles {
  loaded: LoadedStyles;
  current: OutputStyle;
}

const homeDir = () => process.env.HOME || os.homedir();

export async function stylesFor(kernel: Kernel, projectRoot: string): Promise<LoadedStyles> {
  const files = kernel.services.require('project-files', NAME);
  return loadStyles({ projectRoot, keelHome: kernel.config.keelHome, home: homeDir(), trusted: kernel.config.trusted !== false, files });
}

function listing(state: SessionStyles): string {
  const styles = [...state.loaded.styles.values()];
  const width = Math.max(...styles.map((s) => s.name.length)) + 2;
  const lines = styles.map((s) => `${s === state.current ? '* ' : '  '}${s.name.padEnd(width)}${s.description}${s.source === 'built-in' ? '' : ` (${s.source})`}`);
  return [`Output styles (current: ${state.current.name}; /output-style <name> switches):`, ...lines, ...state.loaded.shadowed.map((l) => `  note: ${l}`)].join('\n');
}

export default definePlugin(() => ({
  name: NAME,
  kernel: '^1.0.0',
  // Style files are read as AGENTS.md is: the `project-files` service.
  dependencies: ['instructions'],
  config: { outputStyle: z.string().min(1) },
  apply(kernel) {
    const stateOf = (session: Session) => session.data.get(NAME) as SessionStyles | undefined;
    let toldUntrusted = false;
    const reported = new Set<string>();

    kernel.hooks.sessionStart.tapPromise(NAME, async (session) => {
      const loaded = await stylesFor(kernel, session.projectRoot);
      for (const error of loaded.errors) {
        if (reported.has(error)) continue;
        reported.add(error);
        kernel.log('warn', `output style not loaded: ${error}`, NAME);
      }
      if (loaded.untrusted && !toldUntrusted) {
        toldUntrusted = true;
        kernel.log('warn', `the project's output styles in ${loaded.untrusted} are not loaded: the folder is not trusted (keel trust)`, NAME);
      }
      // A sub-agent answers another agent, not a person: it keeps Keel's own tone whatever the style.
      const wanted = process.env.KEEL_SUBAGENT_MODE === '1' ? 'default' : ((kernel.config.outputStyle as string | undefined) ?? 'default');
      let current = loaded.styles.get(wanted.toLowerCase());
      if (!current) {
        const where = kernel.config.sources.outputStyle ? ` (from ${kernel.config.sources.outputStyle})` : '';
        const message = `outputStyle${where}: no style named "${wanted}"; using default. Styles: ${[...loaded.styles.values()].map((s) => s.name).join(', ')}`;
        if (!reported.has(message)) kernel.log('warn', message, NAME);
        reported.add(message);
        current = loaded.styles.get('default')!;
      }
      session.data.set(NAME, { loaded, current } satisfies SessionStyles);
    });

    const service: OutputStyleService = {
      active(session) {
        const current = stateOf(session)?.current;
        return current && current.prompt ? { name: current.name, prompt: current.prompt, keepCodingInstructions: current.keepCodingInstructions } : undefined;
      },
    };
    kernel.services.provide('output-style', service);

    kernel.commands.register({
      name: 'output-style',
      description: 'list the output styles; /output-style <name> switches this session to one and saves it in .claude/settings.local.json',
      async run(args, ctx) {
        const state = stateOf(ctx.session);
        if (!state) throw new Error('no session styles loaded');
        const name = args.trim();
        if (!name) return listing(state);
        const style = state.loaded.styles.get(name.toLowerCase());
        if (!style) throw new Error(`no style named "${name}"; styles: ${[...state.loaded.styles.values()].map((s) => s.name).join(', ')}`);
        state.current = style;
        if (kernel.config.trusted === false) return `Output style: ${style.name} (this session only: the project is not trusted, so its settings are not saved)`;
        const { saveLocalSetting } = await import('./save.js');
        const file = await saveLocalSetting(ctx.session.projectRoot, 'outputStyle', style.name);
        return `Output style: ${style.name} (saved in ${file})`;
      },
    });

    kernel.services.provide(`doctor:${NAME}`, {
      async checks() {
        const loaded = await stylesFor(kernel, kernel.config.projectRoot);
        return [{ name: 'output styles', ok: loaded.errors.length === 0, detail: loaded.errors.length ? loaded.errors.join('; ') : `${loaded.styles.size} available` }];
      },
    });
  },
}));
