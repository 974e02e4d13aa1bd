/** An ACP prompt (text, images, resource links, embedded resources) as the content of a Keel user message. */
import { fileURLToPath } from 'node:url';
import { RequestError, type ContentBlock } from '@agentclientprotocol/sdk';
import type { ContentBlockParam } from '../../kernel/index.js';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

function pathOf(uri: string): string {
  if (!uri.startsWith('file://')) return uri;
  try {
    return fileURLToPath(uri);
  } catch {
    return uri;
  }
}

export function toKeelContent(prompt: ContentBlock[]): ContentBlockParam[] {
  const out: ContentBlockParam[] = [];
  prompt.forEach((block, index) => {
    const at = `prompt[${index}]`;
    switch (block.type) {
      case 'text':
        out.push({ type: 'text', text: block.text });
        return;
      case 'image':
        if (!IMAGE_TYPES.has(block.mimeType)) throw RequestError.invalidParams({ field: `${at}.mimeType` }, `${at}: image type ${block.mimeType} is not one the model takes (png, jpeg, gif, webp)`);
        // Sent on, an empty image would make the API refuse this turn; it is refused here, naming the field.
        if (!block.data) throw RequestError.invalidParams({ field: `${at}.data` }, `${at}.data: empty (an image needs its base64 data)`);
        out.push({ type: 'image', source: { type: 'base64', media_type: block.mimeType as ImageType, data: block.data } });
        return;
      case 'resource_link':
        out.push({ type: 'text', text: `The user attached ${pathOf(block.uri)}${block.title || block.name ? ` (${block.title ?? block.name})` : ''}; read it if it matters.` });
        return;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource) {
          out.push({ type: 'text', text: `<context ref="${pathOf(resource.uri)}">\n${resource.text}\n</context>` });
        } else if (!resource.blob && ((resource.mimeType && IMAGE_TYPES.has(resource.mimeType)) || resource.mimeType === 'application/pdf')) {
          throw RequestError.invalidParams({ field: `${at}.resource.blob` }, `${at}.resource.blob: empty (a resource of type ${resource.mimeType} needs its base64 data)`);
        } else if (resource.mimeType && IMAGE_TYPES.has(resource.mimeType)) {
          out.push({ type: 'image', source: { type: 'base64', media_type: resource.mimeType as ImageType, data: resource.blob } });
        } else if (resource.mimeType === 'application/pdf') {
          out.push({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: resource.blob } });
        } else {
          out.push({ type: 'text', text: `The user attached ${pathOf(resource.uri)} (${resource.mimeType ?? 'binary'}, not shown).` });
        }
        return;
      }
      case 'audio':
        throw RequestError.invalidParams({ field: at }, `${at}: audio is not supported (the agent's promptCapabilities.audio is false)`);
      default:
        throw RequestError.invalidParams({ field: at }, `${at}: unknown content type ${JSON.stringify((block as { type?: unknown }).type)}`);
    }
  });
  if (out.length === 0) throw RequestError.invalidParams({ field: 'prompt' }, 'prompt: empty (give at least one content block)');
  return out;
}
