/** Turns a fetched body into text for the model: HTML becomes markdown, other text is kept, binary is refused. */
export type PageText = { kind: 'text'; text: string; html: boolean } | { kind: 'binary'; type: string };

const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|x-javascript|ecmascript|x-yaml|yaml|toml|x-sh)|[^;]*\+(json|xml))/i;

export async function pageText(body: Buffer, contentType: string): Promise<PageText> {
  const type = contentType.split(';')[0].trim().toLowerCase();
  const html = type === 'text/html' || type === 'application/xhtml+xml' || (type === '' && /^\s*<(!doctype html|html)/i.test(body.subarray(0, 200).toString()));
  if (!html && type !== '' && !TEXT_TYPES.test(type)) return { kind: 'binary', type };
  if (!html && type === '' && body.subarray(0, 8192).includes(0)) return { kind: 'binary', type: 'application/octet-stream' };
  const text = decodeBody(body, contentType);
  if (!html) return { kind: 'text', text, html: false };
  return { kind: 'text', text: await htmlToMarkdown(text), html: true };
}

function decodeBody(body: Buffer, contentType: string): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

async function htmlToMarkdown(html: string): Promise<string> {
  // Loaded on first use: turndown and its DOM parser are not needed to start the CLI.
  const { default: TurndownService } = await import('turndown');
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  service.remove(['script', 'style', 'noscript', 'template', 'iframe', 'canvas', 'head', 'title', 'form']);
  // By name, not in the list: turndown types its tag list as HTML elements only, and an <svg> is not one.
  service.remove((node) => node.nodeName.toLowerCase() === 'svg');
  return service
    .turndown(html)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
