/** Reading and editing documents, loaded on the first read_file of a PDF or notebook or the first notebook_edit. */
export { editCell } from './edit-cell.js';
export { readDocument } from './read-document.js';
