/** A terminal stream whose written text passes through a function first (ASCII only, no colours). */
export function mappedStream(stream: NodeJS.WriteStream, map: (text: string) => string): NodeJS.WriteStream {
  return new Proxy(stream, {
    get(target, key) {
      if (key === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (c: unknown, ...r: unknown[]) => boolean).call(target, typeof chunk === 'string' ? map(chunk) : chunk, ...rest);
      }
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
