/** What the UI takes from other plugins' services (typed by the plugins that offer them). */
import type { Kernel, Services } from '../../kernel/index.js';

export type PromptHistory = ReturnType<Services['promptHistory']['open']>;

/** Without the session store nothing is resumed, so no user message needs reading. */
export const userItemsOf = (kernel: Kernel): Services['transcript']['userItems'] => kernel.services.get('transcript')?.userItems ?? (() => []);
