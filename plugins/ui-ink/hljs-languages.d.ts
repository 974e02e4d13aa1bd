/** highlight.js ships no typings for its per-language entry points; each is a grammar function. */
declare module 'highlight.js/lib/languages/*' {
  const language: (hljs: unknown) => unknown;
  export default language;
}
