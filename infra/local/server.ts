import { config, publicBaseUrl } from '../../lib/config';
import { closeDb, connectDb } from '../../lib/db/client';
import { migrateDatabase } from '../../lib/db/migrate';
import { LocalMailSink, useMailTransport } from '../../lib/mail/transport';
import { startMaintenanceLoop } from '../../lib/maintenance';
import { createLocalServer, listen } from './app';

/**
 * `npm start`: migrates the database (PGlite in DATA_DIR, or DATABASE_URL) and serves every route
 * of functions/routes.ts on HOST:PORT, mail going to the local sink (GET /_dev/emails).
 */
const { HOST, PORT, DATA_DIR, DATABASE_URL } = config();
const { db, driver } = await connectDb();
await migrateDatabase(db, driver);
const mailSink = new LocalMailSink(DATA_DIR);
useMailTransport(mailSink);
const stopMaintenance = startMaintenanceLoop(10_000);
const server = createLocalServer({ mailSink });
const url = await listen(server, PORT, HOST);
console.log(
  `Case Evidence and Billing Service on ${url} (${DATABASE_URL ? 'Postgres server' : `PGlite in ${DATA_DIR}`})`,
);
console.log(`  API reference ${url}/docs, description ${url}/openapi.json, mail sink ${url}/_dev/emails`);
if (publicBaseUrl() !== url) console.log(`  links to this API name ${publicBaseUrl()} (PUBLIC_BASE_URL)`);

const shutdown = async () => {
  stopMaintenance();
  server.close();
  await closeDb();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
