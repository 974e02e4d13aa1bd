import path from 'node:path';
import { z } from 'zod';
import { defineTool, errorMessage, type ToolResult } from '../../kernel/index.js';
import { editorInfo, fileAccessFor, isMissing } from './file-access.js';
import { displayPath, formatSize, resolvePath } from './paths.js';
import { remember } from './read-state.js';
import { OpenError, openReal, readAll, realTarget, type Opened } from './safe-open.js';
import { missingPathHint } from './suggest.js';
import { cutLine, decode, isBinary, MAX_TEXT_BYTES, splitLines } from './text.js';

export const DEFAULT_LIMIT = 2000;
const MAX_LINE = 2000;
/** Characters of numbered text one call returns at most, whatever the line count. */
const MAX_CHARS = 100_000;
/** The Messages API takes images up to 5 MB of base64. */
const MAX_IMAGE_BYTES = 3.75 * 1024 * 1024;

const IMAGE_TYPES: Record<string, 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

const BINARY_EXTENSIONS = new Set(
  '.zip .gz .tgz .bz2 .xz .7z .tar .jar .war .class .exe .dll .so .dylib .o .a .lib .wasm .pdf .ico .bmp .tiff .mp3 .mp4 .mov .avi .wav .flac .ogg .woff .woff2 .ttf .otf .eot .sqlite .db .bin .pyc .node'.split(' '),
);

const input = z.object({
  path: z.string().min(1).describe('File path, absolute or relative to the working directory'),
  offset: z.number().int().min(1).optional().describe('First line to read (1-based)'),
  limit: z.number().int().min(1).optional().describe(`Lines to read (default ${DEFAULT_LIMIT})`),
});

export const readFileTool = defineTool({
  name: 'read_file',
  description: `Read a file. Returns numbered lines (cat -n style), at most ${DEFAULT_LIMIT} per call; use offset and limit to page through longer files. Images (png, jpg, gif, webp) come back as images. Read a file before editing or overwriting it. Prefer this over cat/head/tail in bash, and read several files in parallel when useful.`,
  permission: 'read',
  input,
  paths: (i) => [i.path],
  async execute(args, ctx): Promise<ToolResult> {
    const abs = resolvePath(args.path, ctx.cwd);
    const shown = (p: string) => displayPath(p, ctx.cwd);
    const access = fileAccessFor(ctx, 'read');
    if (access && !IMAGE_TYPES[path.extname(abs).toLowerCase()]) {
      let text: string;
      try {
        text = await access.readText(ctx.session, abs, ctx.signal);
      } catch (err) {
        if (isMissing(err)) return { content: `File not found: ${shown(abs)}.${await missingPathHint(abs, shown)}`, isError: true };
        return { content: `read_file: ${shown(abs)}: the editor could not read it: ${errorMessage(err)}`, isError: true };
      }
      const bytes = Buffer.from(text, 'utf8');
      remember(ctx.session, abs, bytes, editorInfo(bytes));
      return numbered(text, args, shown(abs), abs);
    }
    let file: Opened;
    try {
      file = await openReal(await realTarget(abs), 'read', shown(abs));
    } catch (err) {
      if (err instanceof OpenError) {
        if (err.kind === 'directory') return { content: `${shown(abs)} is a directory; use ls to list it.`, isError: true };
        return { content: `read_file: ${err.message}`, isError: true };
      }
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { content: `File not found: ${shown(abs)}.${await missingPathHint(abs, shown)}`, isError: true };
      throw err;
    }
    const { handle, info } = file;
    let buf: Buffer;
    try {
      const ext = path.extname(abs).toLowerCase();
      const imageType = IMAGE_TYPES[ext];
      if (imageType) {
        if (info.size > MAX_IMAGE_BYTES) {
          return { content: `${shown(abs)} is an image of ${formatSize(info.size)}, larger than the ${formatSize(MAX_IMAGE_BYTES)} the model accepts.`, isError: true };
        }
        const image = await readAll(handle, info.size);
        remember(ctx.session, abs, image, info);
        return {
          content: [
            { type: 'text', text: `Image ${shown(abs)} (${formatSize(info.size)})` },
            { type: 'image', source: { type: 'base64', media_type: imageType, data: image.toString('base64') } },
          ],
        };
      }
      if (info.size > MAX_TEXT_BYTES) {
        return { content: `${shown(abs)} is ${formatSize(info.size)}, too large to read; search it with grep or print parts with bash (sed -n '100,200p').`, isError: true };
      }
      buf = await readAll(handle, info.size);
      if (BINARY_EXTENSIONS.has(ext) || isBinary(buf)) {
        return { content: `${shown(abs)} is a binary file (${formatSize(info.size)}); read_file shows text and images only.`, isError: true };
      }
    } finally {
      await handle.close();
    }
    remember(ctx.session, abs, buf, info);
    return numbered(decode(buf).text, args, shown(abs), abs);
  },
});

/** The text as numbered lines (cat -n style), paged by offset and limit. */
function numbered(text: string, args: z.infer<typeof input>, shown: string, abs: string): ToolResult {
  const lines = splitLines(text);
  if (lines.length === 0) return { content: `${shown} is empty.` };
  const start = args.offset ?? 1;
  if (start > lines.length) {
    return { content: `${shown} has only ${lines.length} lines; offset ${start} is past the end.`, isError: true };
  }
  const wanted = Math.min(lines.length, start - 1 + (args.limit ?? DEFAULT_LIMIT));
  const out: string[] = [];
  let chars = 0;
  let end = start - 1;
  for (let n = start; n <= wanted; n++) {
    const line = `${String(n).padStart(6)}\t${cutLine(lines[n - 1], MAX_LINE)}`;
    if (chars + line.length > MAX_CHARS && out.length > 0) break;
    out.push(line);
    chars += line.length + 1;
    end = n;
  }
  if (end < lines.length || start > 1) {
    const more = lines.length - end;
    const tail = more > 0 ? ` ${more} more lines not shown: call read_file with offset=${end + 1} to read on.` : '';
    out.push(`\n[Lines ${start}-${end} of ${lines.length}.${tail}]`);
  }
  return { content: out.join('\n'), display: { path: abs, lines: end - start + 1, totalLines: lines.length } };
}
