/**
 * The fleet-wide request rate. Every model request of every run asks its worker's broker (a loopback HTTP server,
 * KEEL_FLEET_BROKER) for a token; the broker adds a job to the fleet's request queue and answers when that job has
 * been processed. Every worker processes that queue under BullMQ's rate limiter, which is global (its counter lives
 * in Redis): one job per 60000 / requestsPerMinute ms, whichever worker on whichever machine takes it. So requests
 * leave the fleet evenly spaced, never more than the limit in any minute, however many workers there are.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue, QueueEvents, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { fleetKeys } from './keys.js';
import type { FleetSettings } from './settings.js';

export interface Broker {
  /** The URL a run of job `jobId` uses (KEEL_FLEET_BROKER). */
  urlFor(jobId: string): string;
  close(): Promise<void>;
}

export async function startBroker(
  settings: FleetSettings,
  redis: Redis,
  onReport: (jobId: string, report: { costUsd: number; turns: number }) => Promise<void>,
): Promise<Broker> {
  const rpm = settings.requestsPerMinute;
  const name = fleetKeys(settings.queue).requestQueue;
  let limiter: { queue: Queue; events: QueueEvents; worker: Worker; eventsConnection: Redis } | undefined;
  if (rpm) {
    const queue = new Queue(name, { connection: redis });
    // QueueEvents blocks on its connection (XREAD), so it gets one of its own; a connection passed in is ours to close.
    const eventsConnection = redis.duplicate();
    const events = new QueueEvents(name, { connection: eventsConnection });
    const worker = new Worker(name, async () => undefined, {
      connection: redis,
      concurrency: 1,
      limiter: { max: 1, duration: Math.max(1, Math.floor(60_000 / rpm)) },
      // Tokens nobody waits for any more (their run ended) are dropped after a minute.
      removeOnComplete: { age: 60, count: 10_000 },
      removeOnFail: { age: 60 },
    });
    queue.on('error', () => undefined);
    events.on('error', () => undefined);
    worker.on('error', () => undefined);
    await events.waitUntilReady();
    limiter = { queue, events, worker, eventsConnection };
  }
  const acquire = async () => {
    if (!limiter) return;
    const job = await limiter.queue.add('request', {}, { removeOnComplete: { age: 60 }, removeOnFail: { age: 60 } });
    await job.waitUntilFinished(limiter.events);
  };

  const secret = randomBytes(16).toString('hex');
  const server = http.createServer((req, res) => {
    const match = /^\/([0-9a-f]+)\/([^/]+)\/acquire$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match || match[1] !== secret) {
      res.writeHead(404).end();
      return;
    }
    const jobId = decodeURIComponent(match[2]);
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      let report: { costUsd?: number; turns?: number } = {};
      try {
        report = JSON.parse(body) as typeof report;
      } catch {
        // a report is optional; the token is what was asked for
      }
      // The worker records the run's progress (and snapshots its checkout) before the request may go out.
      onReport(jobId, { costUsd: Number(report.costUsd) || 0, turns: Number(report.turns) || 0 })
        .catch(() => undefined)
        .then(acquire)
        .then(
        () => res.writeHead(200).end(),
        (err: unknown) => res.writeHead(503).end(String(err)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    urlFor: (jobId) => `http://127.0.0.1:${port}/${secret}/${encodeURIComponent(jobId)}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      if (limiter) {
        await limiter.worker.close().catch(() => undefined);
        await limiter.events.close().catch(() => undefined);
        await limiter.queue.close().catch(() => undefined);
        await limiter.eventsConnection.quit().catch(() => limiter!.eventsConnection.disconnect());
      }
    },
  };
}
