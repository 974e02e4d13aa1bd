/** The status line's runner and its input, loaded when an interactive UI starts watching (never for `keel -p`). */
export { statusInput } from './input.js';
export { StatusRunner } from './runner.js';
