/**
 * Text about to be posted to GitHub (a comment, the job summary): secrets redacted, off-list images neutralised, and
 * redacted again, since showing a neutralised image's URL decodes it (`SEC&#82;ET` is shown as `SECRET`).
 */
import { neutraliseImages } from './images.js';
import type { ImagePolicy } from './image-policy.js';
import type { Redact } from './redact.js';

export function publishable(text: string, redact: Redact, allows: ImagePolicy): string {
  return redact(neutraliseImages(redact(text), allows));
}
