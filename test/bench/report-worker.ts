import { performance } from 'node:perf_hooks';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { COMPRESSION_OPTIONS } from '../../lib/http/compression';
import { LAMBDA_PAYLOAD_BYTES } from '../../lib/http/payload-limits';
import { createBillingReport } from '../../lib/billing/report';
import { closeDb, openPostgres, useConnection } from '../../lib/db/client';

/**
 * One billing report in a fresh process, so its peak memory is the report's own:
 * `node report-worker.mjs <databaseUrl> <organizationId> <userId> <json|pdf>` (report.ts bundles
 * this file as the cloud function is bundled) prints one JSON line (ReportWorkerResult).
 */
export interface ReportWorkerResult {
  format: 'json' | 'pdf';
  elapsedMs: number;
  /** CPU time of the report (user and system), which the machine's load does not inflate as it does elapsed time. */
  cpuMs: number;
  /** getrusage's high-water mark: the most this process held at any moment. */
  peakRssMb: number;
  /** Resident memory once the modules are loaded and the database is open, before the report. */
  startRssMb: number;
  payloadBytes: number;
  /**
   * JSON only: the answer's envelope compressed as lib/http/compression.ts does it, each encoding:
   * its size, the time it took, and the Lambda result it makes (base64 body, serialized) against
   * Lambda's limit; and the result of the plain envelope.
   */
  compression?: {
    envelopeBytes: number;
    plainResultBytes: number;
    limitBytes: number;
    br: CompressionRun;
    gzip: CompressionRun;
  };
}

export interface CompressionRun {
  bytes: number;
  ms: number;
  resultBytes: number;
}

/** The Lambda result of a body, serialized as the runtime does (headers as the endpoint sends them). */
const resultBytes = (body: string, base64: boolean) =>
  Buffer.byteLength(
    JSON.stringify({
      statusCode: 200,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Content-Encoding': 'br' },
      body,
      isBase64Encoded: base64,
    }),
  );

function compressRun(envelope: Buffer, compress: (input: Buffer) => Buffer): CompressionRun {
  const started = performance.now();
  const compressed = compress(envelope);
  const ms = Math.round(performance.now() - started);
  return { bytes: compressed.byteLength, ms, resultBytes: resultBytes(compressed.toString('base64'), true) };
}

// An error is printed without the minified source line Node would quote for an uncaught one.
process.on('uncaughtException', (error) => {
  console.error(error);
  process.exit(1);
});

const [url, organizationId, userId, format] = process.argv.slice(2) as [string, string, string, 'json' | 'pdf'];
useConnection(await openPostgres(url, { max: 2 }));
const startRss = process.memoryUsage().rss;
const startCpu = process.cpuUsage();
const started = performance.now();
const result = await createBillingReport(
  { organization: { id: organizationId }, actor: { user: { id: userId } } },
  { format, startDate: '2000-01-01T00:00:00.000Z' },
);
const elapsedMs = performance.now() - started;
const cpu = process.cpuUsage(startCpu);
// The JSON answer is serialized as the endpoint serializes it: after the time, within the peak.
const payloadBytes =
  format === 'json' ? Buffer.byteLength(JSON.stringify(result)) : (result as { sizeBytes: number }).sizeBytes;
// Compressed as lib/http/compression.ts does it, after the report: the peak below includes it, as the function holds it.
let compression: ReportWorkerResult['compression'];
if (format === 'json') {
  const text = JSON.stringify({ data: result, statusCode: 200, timestamp: new Date().toISOString() });
  const envelope = Buffer.from(text);
  compression = {
    envelopeBytes: envelope.byteLength,
    plainResultBytes: resultBytes(text, false),
    limitBytes: LAMBDA_PAYLOAD_BYTES,
    br: compressRun(envelope, (input) => brotliCompressSync(input, COMPRESSION_OPTIONS.br)),
    gzip: compressRun(envelope, (input) => gzipSync(input, COMPRESSION_OPTIONS.gzip)),
  };
}
await closeDb();
const output: ReportWorkerResult = {
  format,
  elapsedMs: Math.round(elapsedMs),
  cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  startRssMb: Math.round(startRss / 1024 / 1024),
  payloadBytes,
  ...(compression ? { compression } : {}),
};
console.log(JSON.stringify(output));
