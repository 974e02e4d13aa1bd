/** The provider's request code, loaded on the first request it answers (config `provider: 'openai'`). */
export { openAIQuery } from './query.js';
