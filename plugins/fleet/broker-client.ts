/**
 * The run's side of the fleet's request rate: before each model request, a run started by `keel fleet work` asks its
 * worker's local broker (KEEL_FLEET_BROKER, a loopback URL) for a token and reports what it has spent so far. The
 * worker answers once the fleet-wide limiter (BullMQ, in Redis) lets one more request through.
 */
import http from 'node:http';

export function acquireToken(broker: string, report: { costUsd: number; turns: number; signal?: AbortSignal }): Promise<void> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ costUsd: report.costUsd, turns: report.turns });
    const req = http.request(`${broker}/acquire`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, signal: report.signal }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`fleet worker's broker answered ${res.statusCode}`))));
    });
    req.on('error', (err) => reject(new Error(`fleet worker's broker at ${broker} is gone: ${err.message}`)));
    req.end(body);
  });
}
