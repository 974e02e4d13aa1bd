// Preloaded into a measured keel (NODE_OPTIONS=--expose-gc --import …): on SIGUSR2 it collects garbage and
// appends one JSON line (retained heap, RSS, peak RSS, CPU) to $BENCH_PROBE_FILE. Not a benchmark itself.
import { appendFileSync } from 'node:fs';

// CPU is read before and after the probe's own full collection: the bench counts a window from one probe's `cpu` (after)
// to the next one's `cpuBefore`, so the forced collections are not counted as Keel's time.
process.on('SIGUSR2', () => {
  const before = process.cpuUsage();
  globalThis.gc?.();
  const mem = process.memoryUsage();
  const cpu = process.cpuUsage();
  const line = {
    heapUsed: mem.heapUsed,
    heapTotal: mem.heapTotal,
    external: mem.external,
    rss: mem.rss,
    maxRSS: process.resourceUsage().maxRSS * 1024,
    cpuBefore: (before.user + before.system) / 1e6,
    cpu: (cpu.user + cpu.system) / 1e6,
  };
  appendFileSync(process.env.BENCH_PROBE_FILE, `${JSON.stringify(line)}\n`);
});
