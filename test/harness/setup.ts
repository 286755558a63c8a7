import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { testClock } from '../../lib/clock';
import { closeDb, openPglite, openPostgres, useConnection } from '../../lib/db/client';
import { LocalMailSink, useMailTransport } from '../../lib/mail/transport';
import { drainLocalImports, useLocalImportRunner } from '../../lib/material/imports/queue';
import { databaseUrl } from './databases';

/** Every test file gets its own database, cloned from the migrated template, and its own mail sink. */
export const mailSink = new LocalMailSink();

let dropDatabase: (() => Promise<void>) | undefined;

beforeAll(async () => {
  useMailTransport(mailSink);
  // Imports started through the handlers run in this process, as on the local server.
  useLocalImportRunner(async (importId) => (await import('../../lib/material/imports/run')).runImport(importId));
  const template = inject('databaseTemplate');
  if (template.kind === 'postgres') {
    const name = `${template.prefix}${randomBytes(6).toString('hex')}`;
    const admin = await openPostgres(template.url, { max: 1 });
    await admin.db.execute(`create database "${name}" template "${template.template}"`);
    // Enough connections that concurrency tests (up to 8 requests at once) run on separate
    // connections in parallel, as separate Lambda instances would.
    useConnection(await openPostgres(databaseUrl(template.url, name), { max: 8 }));
    dropDatabase = async () => {
      await admin.db.execute(`drop database if exists "${name}" with (force)`);
      await admin.close();
    };
  } else {
    useConnection(await openPglite(undefined, new Blob([readFileSync(template.file)])));
  }
});

afterEach(() => {
  testClock.reset();
});

afterAll(async () => {
  // An import still running in the background would otherwise find its database gone.
  await drainLocalImports();
  await closeDb();
  await dropDatabase?.();
});
