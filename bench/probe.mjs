// Preloaded into a measured keel (NODE_OPTIONS=--expose-gc --import …): on SIGUSR2 it collects garbage and
// appends one JSON line (retained heap, RSS, peak RSS, CPU) to $BENCH_PROBE_FILE. Not a benchmark itself.
import { appendFileSync } from 'node:fs';

process.on('SIGUSR2', () => {
  globalThis.gc?.();
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  const line = { heapUsed: mem.heapUsed, rss: mem.rss, maxRSS: process.resourceUsage().maxRSS * 1024, cpu: (cpu.user + cpu.system) / 1e6 };
  appendFileSync(process.env.BENCH_PROBE_FILE, `${JSON.stringify(line)}\n`);
});
