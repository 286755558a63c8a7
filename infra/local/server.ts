import { setFlagsFromString } from 'node:v8';
import { config, publicBaseUrl } from '../../lib/config';
import { closeDb, connectDb, useConnection } from '../../lib/db/client';
import { migrateDatabase } from '../../lib/db/migrate';
import { LocalMailSink, useMailTransport } from '../../lib/mail/transport';
import { startMaintenanceLoop } from '../../lib/maintenance';
import { useLocalImportRunner } from '../../lib/material/imports/queue';
import { runImport } from '../../lib/material/imports/run';
import { createLocalServer, listen } from './app';
import { type ImportThreadDatabase, startImportThreads } from './import-threads';
import { canRunPgliteThread, startPgliteThread } from './pglite-thread';

/**
 * `npm start`: migrates the database (PGlite in DATA_DIR, or DATABASE_URL) and serves every route
 * of functions/routes.ts on HOST:PORT, mail going to the local sink (GET /_dev/emails).
 */
/**
 * V8 lets the old generation grow to about 4x what survived the last full collection before it
 * collects again. Under load that is 190-240 MB of garbage around 47 MB of live objects (request
 * objects still in flight at a scavenge get promoted), and pages once touched stay resident: the
 * soak's RSS climbed in steps as the peaks rose (issue 36, test/bench/README.md "Soak"). At 1.5x,
 * a full collection comes every second or two instead of every eight, each a few milliseconds,
 * and the heap stays under about 1.5x live plus the young generation. Read by V8 at each
 * collection, so it applies although set after start, to every thread of the process.
 */
setFlagsFromString('--heap-growing-percent=50');
const { HOST, PORT, DATA_DIR, DATABASE_URL, LOCAL_IMPORT_SLOTS } = config();
// PGlite runs its statements synchronously in WebAssembly: in a thread of its own, a long import
// batch never holds the API's event loop (infra/local/pglite-thread.ts). On a Node without Web
// Locks it stays in this thread, with imports run in-process.
const pgliteThread = !DATABASE_URL && canRunPgliteThread() ? await startPgliteThread(`${DATA_DIR}/pglite`) : undefined;
if (pgliteThread) useConnection(pgliteThread.connection);
const { db, driver } = await connectDb();
await migrateDatabase(db, driver);
const mailSink = new LocalMailSink(DATA_DIR);
useMailTransport(mailSink);
// The server is its own import worker (the cloud's is an SQS-driven function), LOCAL_IMPORT_SLOTS
// imports at once, each in a worker thread, off the API's event loop: its own connections to the
// Postgres server, or a client of the PGlite thread.
const importDatabase: ImportThreadDatabase | undefined = DATABASE_URL
  ? { url: DATABASE_URL }
  : pgliteThread && { pgliteThread: pgliteThread.id };
const importThreads = importDatabase
  ? startImportThreads({ config: config(), database: importDatabase, warm: LOCAL_IMPORT_SLOTS })
  : undefined;
useLocalImportRunner(importThreads?.run ?? runImport, LOCAL_IMPORT_SLOTS);
const stopMaintenance = startMaintenanceLoop(10_000);
const server = createLocalServer({ mailSink });
const url = await listen(server, PORT, HOST);
console.log(
  `Case Evidence and Billing Service on ${url} (${DATABASE_URL ? 'Postgres server' : `PGlite in ${DATA_DIR}${pgliteThread ? ', in its own thread' : ''}`})`,
);
console.log(`  API reference ${url}/docs, description ${url}/openapi.json, mail sink ${url}/_dev/emails`);
if (publicBaseUrl() !== url) console.log(`  links to this API name ${publicBaseUrl()} (PUBLIC_BASE_URL)`);

/** Requests in flight get this long to finish before the database closes under them. */
const DRAIN_MS = 10_000;

const shutdown = async () => {
  stopMaintenance();
  // Stop taking requests and let those in flight answer; only then close the database, which they use.
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
  // An import cut short stays running; maintenance sends it again once its lease lapses.
  await importThreads?.close();
  await closeDb();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
