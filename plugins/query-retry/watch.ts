/** A fetch that reports life to the watchdogs: on the response headers and on every chunk of the body. */

export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Bytes, not parsed events, feed the idle watchdog: SDKs drop SSE pings and comments before a provider sees
 * them, yet those keep-alives are exactly how a server says it is still working on a long answer.
 */
export function watchedFetch(alive: () => void, inner: Fetch = (input, init) => fetch(input, init)): Fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    alive();
    if (!response.body) return response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          alive();
          controller.enqueue(chunk);
        },
      }),
    );
    const watched = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    Object.defineProperty(watched, 'url', { value: response.url });
    return watched;
  };
}
