import { performance } from 'node:perf_hooks';
import { createBillingReport } from '../../lib/billing/report';
import { closeDb, openPostgres, useConnection } from '../../lib/db/client';

/**
 * One billing report in a fresh process, so its peak memory is the report's own:
 * `tsx report-worker.ts <databaseUrl> <organizationId> <userId> <json|pdf>` prints one JSON line.
 */
const [url, organizationId, userId, format] = process.argv.slice(2) as [string, string, string, 'json' | 'pdf'];
useConnection(await openPostgres(url, { max: 2 }));
const baselineRss = process.memoryUsage().rss;
const started = performance.now();
const result = await createBillingReport(
  { organization: { id: organizationId }, actor: { user: { id: userId } } },
  { format, startDate: '2000-01-01T00:00:00.000Z' },
);
const elapsedMs = performance.now() - started;
const payloadBytes =
  format === 'json' ? Buffer.byteLength(JSON.stringify(result)) : (result as { sizeBytes: number }).sizeBytes;
await closeDb();
console.log(
  JSON.stringify({
    format,
    elapsedMs: Math.round(elapsedMs),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    startRssMb: Math.round(baselineRss / 1024 / 1024),
    payloadBytes,
  }),
);
