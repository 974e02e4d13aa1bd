/**
 * A response body as the SDK reads it: an async iterable of byte chunks that the transport pushes in as they arrive
 * (`getReader()`, `cancel()` and `tee()` for the other readers). The SDK iterates a body with `Symbol.asyncIterator`
 * when it has one, so a stream's whole event sequence costs one promise per chunk, without the web stream's
 * controller, reader and the error object Node builds when a reader is released (about 2 ms of a one-turn run).
 */
export class ResponseBody {
  #chunks: Uint8Array[] = [];
  #ended = false;
  #error: unknown;
  #failed = false;
  #wake: (() => void) | undefined;
  #locked = false;
  readonly #onCancel: () => void;
  readonly #onSettle: () => void;

  /**
   * `onCancel` runs once when a reader stops early (`return`, `cancel`): the transport drops the connection.
   * `onSettle` runs instead when the reader has all it needs (`settle`): the transport lets the connection finish.
   */
  constructor(onCancel: () => void = () => undefined, onSettle: () => void = onCancel) {
    this.#onCancel = onCancel;
    this.#onSettle = onSettle;
  }

  /** True once a reader has it, as a web stream's `locked`. */
  get locked(): boolean {
    return this.#locked;
  }

  push(chunk: Uint8Array): void {
    if (this.#ended) return;
    this.#chunks.push(chunk);
    this.#poke();
  }

  end(): void {
    this.#ended = true;
    this.#poke();
  }

  /** Ends the body with an error, which a reader gets next (chunks not yet read are dropped, as a web stream's are). */
  fail(error: unknown): void {
    if (this.#ended) return;
    this.#chunks = [];
    this.#error = error;
    this.#failed = true;
    this.#ended = true;
    this.#poke();
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    this.#locked = true;
    return { next: () => this.#next(), return: () => this.#stop() };
  }

  getReader(): { read(): Promise<IteratorResult<Uint8Array>>; releaseLock(): void; cancel(): Promise<void> } {
    this.#locked = true;
    return { read: () => this.#next(), releaseLock: () => undefined, cancel: async () => void (await this.#stop()) };
  }

  /** The reader has all it needs (the stream's last event came): reading ends; the rest of the body is not waited for. */
  settle(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#chunks = [];
    this.#onSettle();
    this.#poke();
  }

  async cancel(): Promise<void> {
    await this.#stop();
  }

  /** Two bodies that each get every chunk of this one (which is then locked). */
  tee(): [ResponseBody, ResponseBody] {
    const pair: [ResponseBody, ResponseBody] = [new ResponseBody(), new ResponseBody()];
    const iterator = this[Symbol.asyncIterator]();
    void (async () => {
      try {
        for (let step = await iterator.next(); !step.done; step = await iterator.next()) for (const body of pair) body.push(step.value);
        for (const body of pair) body.end();
      } catch (err) {
        for (const body of pair) body.fail(err);
      }
    })();
    return pair;
  }

  async #next(): Promise<IteratorResult<Uint8Array>> {
    for (;;) {
      const chunk = this.#chunks.shift();
      if (chunk) return { done: false, value: chunk };
      if (this.#failed) throw this.#error;
      if (this.#ended) return { done: true, value: undefined };
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  async #stop(): Promise<IteratorResult<Uint8Array>> {
    if (!this.#ended) {
      this.#ended = true;
      this.#chunks = [];
      this.#onCancel();
    }
    return { done: true, value: undefined };
  }

  #poke(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
