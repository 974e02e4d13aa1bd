/**
 * NO_COLOR (https://no-color.org) asks for no colour, not for no emphasis: the cursor and the highlighted
 * choice are drawn inverse, titles bold, hints dim. So under NO_COLOR the colour parameters are taken out of
 * every SGR sequence written to the terminal (foreground, background and underline colours, in any form),
 * and bold, dim, italic, underline, inverse and strikethrough stay.
 */
// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[([\d;:]*)m/g;

function isColour(code: number): boolean {
  return (code >= 30 && code <= 39) || (code >= 40 && code <= 49) || (code >= 90 && code <= 97) || (code >= 100 && code <= 107) || code === 59;
}

export function stripColours(text: string): string {
  return text.replace(SGR, (whole, params: string) => {
    if (params === '') return whole;
    const parts = params.split(';');
    const kept: string[] = [];
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (part.includes(':')) continue;
      const code = Number(part);
      if (code === 38 || code === 48 || code === 58) {
        // 38;5;n or 38;2;r;g;b: the colour's own parameters go with it.
        i += parts[i + 1] === '5' ? 2 : parts[i + 1] === '2' ? 4 : 0;
        continue;
      }
      if (!isColour(code)) kept.push(part);
    }
    return kept.length > 0 ? `\x1b[${kept.join(';')}m` : '';
  });
}
