/** The plain UI's code, loaded when its mode runs or asks for trust: the terminal loop, its keys, lines and dialogs. */
export { runPlain } from './run.js';
export { askTrustPlain } from './trust.js';
