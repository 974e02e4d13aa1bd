import { describe, expect, it } from 'vitest';
import { isAbortError, type AgentEvent } from '../../../kernel/index.js';
import queryRetry, { DEFAULT_RETRY } from '../../../plugins/query-retry/index.js';
import { classify, retryAfterMs } from '../../../plugins/query-retry/classify.js';
import { testKernel } from '../../helpers/kernel.js';
import { FakeClock, until } from './fake-clock.js';

const httpError = (status: number, headers: Record<string, string> = {}) =>
  Object.assign(new Error(`${status}`), { status, headers: new Headers(headers), error: { type: 'error', error: { type: 'some_error', message: 'boom' } } });

function service(clock = new FakeClock(), config: Record<string, unknown> = {}) {
  const kernel = testKernel([queryRetry({ clock })], config);
  return { retry: kernel.services.require('retry', 'test'), clock };
}

describe('classify', () => {
  it('retries the transient statuses and nothing else', () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) expect(classify(httpError(status), 0).retry).toBe(true);
    for (const status of [400, 401, 403, 404, 413, 422, 501]) expect(classify(httpError(status), 0).retry).toBe(false);
  });

  it('retries connection errors and streams marked retryable, not other errors', () => {
    expect(classify(Object.assign(new Error('Connection error.'), { name: 'APIConnectionError' }), 0)).toMatchObject({ retry: true });
    expect(classify(Object.assign(new Error('fetch failed'), { cause: { code: 'ECONNRESET' } }), 0)).toEqual({ retry: true, cause: 'connection error: ECONNRESET', connection: true });
    expect(classify(Object.assign(new Error('the response stream broke: terminated'), { retryable: true }), 0)).toEqual({
      retry: true,
      cause: 'the response stream broke: terminated',
    });
    expect(classify(new TypeError('x is not a function'), 0)).toEqual({ retry: false });
  });

  it('does not retry a TLS certificate it refused, which fails the same way every time', () => {
    for (const code of ['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'CERT_HAS_EXPIRED', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID']) {
      const err = Object.assign(new Error('Connection error.'), { name: 'APIConnectionError', cause: Object.assign(new TypeError('fetch failed'), { cause: { code } }) });
      expect(classify(err, 0), code).toEqual({ retry: false });
    }
  });

  it('reads retry-after-ms, retry-after seconds and retry-after dates', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '3' }), 0)).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': '3' }), 0)).toBe(3000);
    expect(retryAfterMs(new Headers({ 'retry-after': '1.5' }), 0)).toBe(1500);
    const now = Date.UTC(2030, 5, 1);
    expect(retryAfterMs(new Headers({ 'retry-after': new Date(now + 9000).toUTCString() }), now)).toBe(9000);
    expect(retryAfterMs(new Headers({ 'retry-after': new Date(now - 9000).toUTCString() }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': '2' }, 0)).toBe(2000);
  });
});

describe('the retry service', () => {
  it('shares one counter across causes and emits a retry event before every wait', async () => {
    const { retry, clock } = service();
    const events: AgentEvent[] = [];
    const failures = [httpError(529), httpError(429, { 'retry-after': '5' }), Object.assign(new Error('x'), { retryable: true })];
    let calls = 0;
    const value = await retry.run(
      async () => {
        calls++;
        const failure = failures.shift();
        if (failure) throw failure;
        return 'ok';
      },
      { emit: (e) => void events.push(e), label: 'Test API' },
    );
    expect(value).toBe('ok');
    expect(calls).toBe(4);
    expect(clock.sleeps).toEqual([1000, 5000, 4000]);
    expect(events.map((e) => (e.type === 'retry' ? [e.attempt, e.delayMs] : e.type))).toEqual([
      [1, 1000],
      [2, 5000],
      [3, 4000],
    ]);
  });

  it('rethrows errors it does not retry, untouched', async () => {
    const { retry } = service();
    const fatal = httpError(400);
    await expect(retry.run(async () => Promise.reject(fatal))).rejects.toBe(fatal);
  });

  it('takes its settings from options, then config `retry`', async () => {
    const { retry, clock } = service(new FakeClock(), { retry: { baseDelayMs: 10, maxRetries: 1 } });
    expect(retry.settings).toEqual({ ...DEFAULT_RETRY, baseDelayMs: 10, maxRetries: 1 });
    await expect(retry.run(async () => Promise.reject(httpError(503)), { label: 'Test API' })).rejects.toThrow('Test API: HTTP 503 some_error: boom (gave up after 1 retry)');
    expect(clock.sleeps).toEqual([10]);
  });

  it('names the bad key of an invalid `retry` config', () => {
    expect(() => service(new FakeClock(), { retry: { baseDelayMs: -5 } })).toThrow(/^plugin "query-retry" failed to apply: config retry\.baseDelayMs: /);
    expect(() => service(new FakeClock(), { retry: { delay: 5 } })).toThrow(/config retry: Unrecognized key/);
  });

  it('aborts an attempt whose stream goes idle, re-arming the watchdog on every event', async () => {
    const { retry, clock } = service();
    let attempts = 0;
    const running = retry.run(async ({ signal, alive }) => {
      attempts++;
      if (attempts > 1) return 'second';
      alive();
      return new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))));
    });
    await until(() => clock.pending().includes(60_000), 'the idle watchdog');
    clock.advance(59_000);
    expect(attempts).toBe(1);
    clock.advance(1_000);
    expect(await running).toBe('second');
    expect(clock.pending()).toEqual([]);
  });

  it('restarts its idle and progress timers on bytes and events instead of making new ones', async () => {
    const { retry, clock } = service();
    let done!: (value: string) => void;
    const running = retry.run(async ({ alive, progress }) => {
      alive();
      for (let i = 0; i < 50; i++) {
        clock.advance(1_000);
        alive();
        progress!();
      }
      return new Promise<string>((resolve) => (done = resolve));
    });
    await until(() => done !== undefined, 'the attempt');
    // First byte, idle and progress: three timers for 50 chunks; each deadline counts from the last restart.
    expect(clock.made).toBe(3);
    expect(clock.deadlines().sort((a, b) => a - b)).toEqual([50_000 + 60_000, 50_000 + 120_000]);
    done('ok');
    expect(await running).toBe('ok');
    expect(clock.pending()).toEqual([]);
  });

  it('still works with a clock whose timer returns only a cancel function', async () => {
    const fake = new FakeClock();
    const oldStyle = { now: () => fake.now(), sleep: (ms: number, signal?: AbortSignal) => fake.sleep(ms, signal), timer: (ms: number, fn: () => void) => fake.timer(ms, fn).cancel };
    const kernel = testKernel([queryRetry({ clock: oldStyle })]);
    const retry = kernel.services.require('retry', 'test');
    let attempts = 0;
    const running = retry.run(async ({ signal, alive }) => {
      attempts++;
      if (attempts > 1) return 'second';
      alive();
      fake.advance(30_000);
      alive();
      return new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))));
    });
    await until(() => fake.deadlines().includes(90_000), 'the idle timer, set again on the second chunk');
    fake.advance(60_000);
    expect(await running).toBe('second');
    expect(fake.pending()).toEqual([]);
  });

  it('an abort by the user is not retried', async () => {
    const { retry } = service();
    const controller = new AbortController();
    let attempts = 0;
    const running = retry.run(
      ({ signal }) => {
        attempts++;
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))));
      },
      { signal: controller.signal },
    );
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(attempts).toBe(1);
  });

  it('gives up on a last attempt that timed out with a timeout error whose causes hold no abort', async () => {
    const { retry, clock } = service(new FakeClock(), { retry: { maxRetries: 1 } });
    const running = retry.run(({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })))), { label: 'Test API' });
    const failed = running.catch((err: unknown) => err);
    for (let n = 0; n < 2; n++) {
      await until(() => clock.pending().includes(DEFAULT_RETRY.firstByteTimeoutMs), `attempt ${n + 1}`);
      clock.advance(DEFAULT_RETRY.firstByteTimeoutMs);
    }
    const err = (await failed) as Error & { code?: string };
    expect(err.message).toBe('Test API timed out: no response within 30 s (2 attempts over 1 min 1 s)');
    expect(err.code).toBe('timeout');
    expect(isAbortError(err)).toBe(false);
  });

  it('defaults add up to about two minutes for an endpoint that never answers', () => {
    const { firstByteTimeoutMs, maxRetries, baseDelayMs } = DEFAULT_RETRY;
    const backoff = Array.from({ length: maxRetries }, (_, i) => baseDelayMs * 2 ** i).reduce((a, b) => a + b, 0);
    expect((maxRetries + 1) * firstByteTimeoutMs + backoff).toBeLessThanOrEqual(150_000);
  });
});
