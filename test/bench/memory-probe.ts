import { memoryUsage } from 'node:process';
import { threadId } from 'node:worker_threads';

/**
 * Preloaded into the soak's server (`node --import tsx --import ./test/bench/memory-probe.ts
 * infra/local/server.ts`): every BENCH_MEMORY_PROBE_MS (default 5 s) it writes one
 * `memory-probe {...}` line to stderr with its thread's JavaScript heap (used and reserved) and
 * the memory held for JavaScript outside it (external, array buffers included), so the soak can
 * tell a growing heap from the rest of the resident set (the allocator, code, stacks). Production
 * code has no hook. Worker threads inherit `--import`, so each thread (the import threads, the
 * PGlite thread) writes its own line (`thread`: 0 is the main thread); the soak reads the
 * process's RSS from /proc.
 */
const MB = 1024 * 1024;
const round = (bytes: number) => Number((bytes / MB).toFixed(1));
const every = Number(process.env.BENCH_MEMORY_PROBE_MS ?? 5_000);

function probe() {
  const usage = memoryUsage();
  const line = {
    thread: threadId,
    heapTotalMb: round(usage.heapTotal),
    heapUsedMb: round(usage.heapUsed),
    externalMb: round(usage.external),
  };
  process.stderr.write(`memory-probe ${JSON.stringify(line)}\n`);
}

setInterval(probe, every).unref();
