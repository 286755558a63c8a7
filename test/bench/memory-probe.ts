import { memoryUsage } from 'node:process';
import { getHeapSpaceStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';

/**
 * Preloaded into the soak's server (`node --import tsx --import ./test/bench/memory-probe.ts
 * infra/local/server.ts`): every BENCH_MEMORY_PROBE_MS (default 5 s) it writes one
 * `memory-probe {...}` line to stderr with the process's memory split into the JavaScript heap
 * (used and reserved, old space apart), memory held for JavaScript outside the heap (external,
 * array buffers) and the rest of the resident set (native: the allocator, code, thread stacks),
 * so the soak can tell a growing heap from growing native memory. Production code has no hook.
 * Worker threads inherit `--import`, so each thread (the import threads, the PGlite thread) writes
 * its own line, its heap apart (`thread`: 0 is the main thread; rssMb is the whole process's).
 */
const MB = 1024 * 1024;
const round = (bytes: number) => Number((bytes / MB).toFixed(1));
const every = Number(process.env.BENCH_MEMORY_PROBE_MS ?? 5_000);

function probe() {
  const usage = memoryUsage();
  const oldSpace = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
  const line = {
    thread: threadId,
    rssMb: round(usage.rss),
    heapTotalMb: round(usage.heapTotal),
    heapUsedMb: round(usage.heapUsed),
    oldSpaceUsedMb: round(oldSpace?.space_used_size ?? 0),
    externalMb: round(usage.external),
    arrayBuffersMb: round(usage.arrayBuffers),
    // For the main thread: resident memory that is neither its heap nor what external counts
    // (allocator arenas, code, stacks, and the other threads' heaps).
    nativeMb: round(usage.rss - usage.heapTotal - usage.external),
  };
  process.stderr.write(`memory-probe ${JSON.stringify(line)}\n`);
}

setInterval(probe, every).unref();
