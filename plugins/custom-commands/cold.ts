/** What runs only when a custom command does: expanding its body (arguments, `!`command``, `@path`). */
export { expandCommand } from './expand.js';
