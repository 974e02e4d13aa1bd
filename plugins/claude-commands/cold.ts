/** The commands' code, loaded when one runs: /export, /context, /review, /login. */
export { conversationMarkdown, writeExport, type FileCreator } from './export.js';
export { formatContext, measureContext } from './context.js';
export { localChanges, pullRequest, reviewPrompt } from './review.js';
export { storeApiKey } from './login.js';
