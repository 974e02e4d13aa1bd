/**
 * The SDK's client with only the API resources Keel calls: `messages` (every request) and `models` (the key check
 * of `keel login`). The SDK's full `Anthropic` client builds every resource it has (batches, files, skills, the
 * beta and organization APIs, …) and its module imports them all: about 650 KB bundled, against about 130 KB for
 * this one, which the binary's start-up snapshot holds and restores on every run.
 */
import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages';
import { Models } from '@anthropic-ai/sdk/resources/models';

export class MessagesClient extends BaseAnthropic {
  messages: Messages = new Messages(this);
  models: Models = new Models(this);
}

/** What a request needs of a client: this one, or another client of the same SDK (Bedrock's, Vertex's). */
export interface MessagesLike {
  messages: Pick<Messages, 'create'>;
  /** Where requests go, for errors that name the endpoint (every client of the SDK has it). */
  baseURL?: string;
}
