/** The styles Keel ships. `default` leaves the base prompt as it is; the others replace its tone section. */
export interface OutputStyle {
  name: string;
  description: string;
  /** The text that takes the place of the base prompt's tone section; empty for `default`. */
  prompt: string;
  /** Keep the base prompt's coding instructions (true for the built-ins; a file says so with `keep-coding-instructions`). */
  keepCodingInstructions: boolean;
  /** Where it comes from: `built-in` or the file. */
  source: string;
}

const EXPLANATORY = `Output style: explanatory.
The user wants to understand the codebase and your choices while you work, not only see the result.
- Before and after a meaningful step, add a short "Insight" note (two or three points) about why the code is shaped the way it is: the pattern in use, the trade-off you took, the constraint that decided it.
- Tie each insight to this project (a file, a function, a convention you found), never generic programming advice.
- Keep insights in the conversation; do not write them into files.
- Still finish the task: explanations go beside the work, not in place of it.`;

const LEARNING = `Output style: learning.
The user wants to learn by doing, so share the work with them.
- Do the surrounding work yourself, but leave one or two small, meaningful pieces for the user to write (a condition, a function body of 2 to 10 lines, a design decision). Mark the spot in the code with a comment that starts with "TODO(human):" and says what is needed.
- Then stop and ask the user to write that piece: say which file and what it should do, and what to think about. Do not write it for them unless they ask.
- Add short "Insight" notes about why the code is shaped the way it is, tied to this project.
- When the user has written their part, review it kindly and precisely, then continue.`;

export const BUILT_IN_STYLES: readonly OutputStyle[] = [
  { name: 'default', description: "Keel's own: brief, to the point, focused on finishing the task", prompt: '', keepCodingInstructions: true, source: 'built-in' },
  { name: 'explanatory', description: 'explains its choices and the codebase with short insights as it works', prompt: EXPLANATORY, keepCodingInstructions: true, source: 'built-in' },
  { name: 'learning', description: 'works with you: leaves small TODO(human) pieces for you to write, and explains', prompt: LEARNING, keepCodingInstructions: true, source: 'built-in' },
];
