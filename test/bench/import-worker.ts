import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { STAFF_ACTOR, withAuditScope } from '../../lib/audit';
import { closeDb, connectDb } from '../../lib/db/client';
import type { ImportRow } from '../../lib/material/imports/jobs';
import { importLocalFile } from '../../lib/material/imports/local-file';

/**
 * One import job in a fresh process, so its peak RSS is the import's own:
 * `node import-worker.mjs '<json ImportWorkerSpec>'` (imports.ts bundles this file) prints one
 * JSON line (ImportWorkerResult). It runs what `npm run admin -- import` runs (importLocalFile: the
 * file stored as the case's source evidence, then the import job run by the worker here), on
 * DATABASE_URL with objects in DATA_DIR/objects as on the local server; progress goes to stderr
 * about every 10 seconds.
 */
export interface ImportWorkerSpec {
  kind: 'email' | 'professional-network' | 'chat-platform';
  caseId: string;
  file: string;
  profileName?: string;
}

export interface ImportWorkerResult {
  status: ImportRow['status'];
  error: string | null;
  /** The failing item (0-based) of a failed import. */
  errorItemIndex: number | null;
  read: number;
  imported: number;
  skipped: number;
  /** From the call to its return: storing the file, hashing it, and the import's batches. */
  elapsedMs: number;
  /** Storing the file (until the import row is written). */
  storeMs: number;
  /** The job itself: from its claim (it hashes the file first) to its last batch. */
  jobMs: number;
  peakRssMb: number;
  startRssMb: number;
}

// An error is printed without the minified source line Node would quote for an uncaught one.
process.on('uncaughtException', (error) => {
  console.error(error);
  process.exit(1);
});

const spec = JSON.parse(process.argv[2] ?? '') as ImportWorkerSpec;
await connectDb();
const startRss = process.memoryUsage().rss;
let lastLog = performance.now();
const onProgress = (row: ImportRow) => {
  if (performance.now() - lastLog < 10_000) return;
  lastLog = performance.now();
  const percent = row.sizeBytes ? Math.floor((row.bytesRead / row.sizeBytes) * 100) : 0;
  console.error(`  ${spec.kind}: ${percent}% of the file, ${row.itemsRead} read, ${row.itemsImported} imported`);
};

const startedAt = Date.now();
const started = performance.now();
const done = await withAuditScope({ actor: STAFF_ACTOR, ip: null, userAgent: null, requestId: randomUUID() }, () =>
  importLocalFile(spec, { onProgress }),
);
const elapsedMs = performance.now() - started;
await closeDb();
const result: ImportWorkerResult = {
  status: done.status,
  error: done.errorCode ? `${done.errorCode}: ${done.errorMessage}` : null,
  errorItemIndex: done.errorItemIndex,
  read: done.itemsRead,
  imported: done.itemsImported,
  skipped: done.itemsSkipped,
  elapsedMs: Math.round(elapsedMs),
  storeMs: done.createdAt.getTime() - startedAt,
  jobMs: done.startedAt && done.finishedAt ? done.finishedAt.getTime() - done.startedAt.getTime() : 0,
  // getrusage's high-water mark (kilobytes on Linux): the most this process held at any moment.
  peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  startRssMb: Math.round(startRss / 1024 / 1024),
};
console.log(JSON.stringify(result));
