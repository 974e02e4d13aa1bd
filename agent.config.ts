/**
 * Keel's own agent config: the worked example of composing an agent. Run `npx keel` anywhere in this
 * repository and this file is found (Keel looks for agent.config.* by name from the working folder up to the folder holding .git).
 */
import { defineConfig, definePlugin, Stage } from 'keel';

/**
 * A small local plugin: it teaches the model this repository's rules by appending a system section on
 * every turn. Stage LATE puts it after the stable sections, so the cached prompt prefix stays intact.
 */
const repoRules = definePlugin((opts: { rules: string[] }) => ({
  name: 'repo-rules',
  kernel: '^1.0.0',
  apply(kernel) {
    const text = ['Rules of this repository:', ...opts.rules.map((rule) => `- ${rule}`)].join('\n');
    kernel.hooks.contextLoad.tapPromise({ name: 'repo-rules', stage: Stage.LATE }, async (context) => ({
      ...context,
      system: [...context.system, { type: 'text', text }],
    }));
    kernel.commands.register({
      name: 'rules',
      description: "show this repository's rules",
      run: async () => text,
    });
  },
}));

export default defineConfig({
  // Start from the full agent…
  preset: 'default',
  // …add our own plugin after the preset's…
  plugins: [
    repoRules({
      rules: [
        'plugins import only from kernel/ and npm packages, never from each other',
        'kernel/ stays small: no provider, tool, UI or file format lives there',
        'every handled fault gets a test that provokes it; run npm test before you finish',
      ],
    }),
  ],
  // …and leave out one we do not need here: this repository's work never fetches web pages.
  disable: ['tool-web'],
  // Edits run without asking; shell commands and network still ask.
  permissionMode: 'edits',
});
