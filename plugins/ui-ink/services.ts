/** What the UI takes from other plugins' services (typed by the plugins that offer them). */
import type { Kernel, Services } from '../../kernel/index.js';

export type PromptHistory = ReturnType<Services['promptHistory']['open']>;

export type TranscriptService = Services['transcript'];

/** Without the session store nothing is resumed: no user message needs reading, and there is no history to cut. */
const NO_TRANSCRIPT: TranscriptService = { userItems: () => [], tail: (messages, linesOf) => ({ groups: messages.map(linesOf).filter((l) => l.length > 0), hiddenMessages: 0, cut: false }), hiddenNote: () => null };

/** The session store's `transcript` service: how a resumed session's messages read, and how much of it is drawn. */
export const transcriptOf = (kernel: Kernel): TranscriptService => kernel.services.get('transcript') ?? NO_TRANSCRIPT;
