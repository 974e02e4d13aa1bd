/**
 * A `Headers` for the Anthropic path that does not load undici. In Node 20 the global `Headers` (like `Response`
 * and `fetch`) is a lazy getter that loads all of undici on first touch, about 25 ms of a start-up, only to hold a
 * few header lines; the SDK builds one per request and the `node:http` transport (transport.ts) needs one per
 * response. This class follows the Fetch standard's `Headers` for what a client does with it: names are checked
 * and compared case-insensitively, values trimmed and checked, `append` joins with ", " (`set-cookie` lines stay
 * apart, `getSetCookie`), iteration is sorted by name. The binary's build binds the SDK's own `Headers` to it
 * (scripts/build.mjs, the `anthropic` vendor bundle); `instanceof` accepts any `Headers`, this one or the
 * platform's, so headers given by a caller are read as headers either way.
 */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const INVALID_VALUE = /[\0\r\n]/;
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

export type HeadersLike = Iterable<readonly [string, string]> | Record<string, string> | { forEach(cb: (value: string, key: string) => void): void };

function checkName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: invalid header name ${JSON.stringify(text)}`);
  return text.toLowerCase();
}

/** Checks a value for header `key`; the message names the header, never the value (it may be an API key). */
function checkValue(key: string, value: string): string {
  const text = String(value).replace(EDGE_WHITESPACE, '');
  if (INVALID_VALUE.test(text)) throw new TypeError(`Headers: the value of "${key}" holds a line break, NUL or a character above U+00FF`);
  return text;
}

const brandOf = (value: unknown): string | undefined => (typeof value === 'object' && value !== null ? Object.prototype.toString.call(value).slice(8, -1) : undefined);

/** True for a `Headers` of any realm or implementation (the platform's brands itself `[object Headers]`). */
function isHeaders(value: unknown): value is Headers {
  return brandOf(value) === 'Headers' && typeof (value as Headers).entries === 'function';
}

/**
 * The platform's `FormData`, for the same bundle: `instanceof` checks the brand (the SDK asks it of every request
 * body) and only `new` loads undici, on the paths that build a form.
 */
export class FormDataByBrand {
  static [Symbol.hasInstance](value: unknown): boolean {
    return brandOf(value) === 'FormData';
  }

  constructor() {
    return new globalThis.FormData() as unknown as FormDataByBrand;
  }
}

export class FetchHeaders implements Headers {
  /** Lower-cased name → combined value; `set-cookie` is kept as its lines in `#cookies`. */
  readonly #map = new Map<string, string>();
  #cookies: string[] = [];

  static [Symbol.hasInstance](value: unknown): boolean {
    return isHeaders(value);
  }

  constructor(init?: HeadersInit | HeadersLike | null) {
    if (init === undefined || init === null) return;
    if (typeof init !== 'object') throw new TypeError('Headers: the init must be an object');
    if (isHeaders(init)) {
      for (const [name, value] of init.entries()) this.append(name, value);
    } else if (typeof (init as Iterable<unknown>)[Symbol.iterator] === 'function') {
      for (const pair of init as Iterable<readonly string[]>) {
        if (typeof pair !== 'object' || pair === null || typeof (pair as Iterable<string>)[Symbol.iterator] !== 'function') throw new TypeError('Headers: each init entry must be a [name, value] pair');
        const items = [...(pair as Iterable<string>)];
        if (items.length !== 2) throw new TypeError('Headers: each init entry must be a [name, value] pair');
        this.append(items[0]!, items[1]!);
      }
    } else {
      for (const [name, value] of Object.entries(init as Record<string, string>)) this.append(name, value);
    }
  }

  append(name: string, value: string): void {
    const key = checkName(name);
    const text = checkValue(key, value);
    if (key === 'set-cookie') {
      this.#cookies.push(text);
      return;
    }
    const existing = this.#map.get(key);
    this.#map.set(key, existing === undefined ? text : `${existing}, ${text}`);
  }

  set(name: string, value: string): void {
    const key = checkName(name);
    const text = checkValue(key, value);
    if (key === 'set-cookie') this.#cookies = [text];
    else this.#map.set(key, text);
  }

  delete(name: string): void {
    const key = checkName(name);
    if (key === 'set-cookie') this.#cookies = [];
    else this.#map.delete(key);
  }

  get(name: string): string | null {
    const key = checkName(name);
    if (key === 'set-cookie') return this.#cookies.length ? this.#cookies.join(', ') : null;
    return this.#map.get(key) ?? null;
  }

  has(name: string): boolean {
    const key = checkName(name);
    return key === 'set-cookie' ? this.#cookies.length > 0 : this.#map.has(key);
  }

  getSetCookie(): string[] {
    return [...this.#cookies];
  }

  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }

  *entries(): IterableIterator<[string, string]> {
    const names = [...this.#map.keys()];
    if (this.#cookies.length) names.push('set-cookie');
    names.sort();
    for (const name of names) {
      if (name === 'set-cookie') for (const cookie of this.#cookies) yield [name, cookie];
      else yield [name, this.#map.get(name)!];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }
}
