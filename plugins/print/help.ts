/** The flags a person needs most, as `/help` lists them; `keel --help` has them all. */
export const MAIN_FLAGS: ReadonlyArray<readonly [flag: string, description: string]> = [
  ['-p, --print', 'headless: run the prompt, print the result, exit'],
  ['--output-format <format>', 'text | json | stream-json (with -p)'],
  ['-c, --continue', "resume this project's newest session"],
  ['-r, --resume [id]', 'resume a session (no id: list them)'],
  ['--fork-session', 'with --resume/--continue: continue in a copy'],
  ['--permission-mode <mode>', 'auto | edits | ask | manual'],
  ['--model <model>', 'the main model'],
  ['--max-turns <n>', 'stop after this many model turns'],
  ['--trust', 'trust this folder for this run'],
  ['--verbose', 'log plugin diagnostics to stderr'],
];

/** The text of `/help`: every registered slash command (name, description), then the main flags. */
export function helpText(commands: ReadonlyArray<{ name: string; description: string }>): string {
  const sorted = [...commands].sort((a, b) => a.name.localeCompare(b.name));
  const width = Math.max(...sorted.map((c) => c.name.length + 1), ...MAIN_FLAGS.map(([flag]) => flag.length));
  return [
    'Slash commands:',
    ...sorted.map((c) => `  ${`/${c.name}`.padEnd(width)}  ${c.description}`),
    '',
    'Main flags (keel --help lists them all):',
    ...MAIN_FLAGS.map(([flag, description]) => `  ${flag.padEnd(width)}  ${description}`),
  ].join('\n');
}
