import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { migrateDatabase } from '../../lib/db/migrate';
import { openPglite, openPostgres } from '../../lib/db/client';
import { databaseUrl, TEST_DATABASE_PREFIX, templateDatabaseName } from './databases';

/**
 * Migrates once into a template, so each test file gets its own fresh database cheaply:
 * on a Postgres server (DATABASE_URL) a template database cloned with CREATE DATABASE ... TEMPLATE;
 * on PGlite a dumped data directory loaded into a new in-memory instance.
 */
export default async function setup(project: TestProject) {
  const url = process.env.DATABASE_URL;
  if (url) {
    const template = templateDatabaseName();
    const admin = await openPostgres(url, { max: 1 });
    const rows = (await admin.db.execute(
      `select 1 from pg_database where datname = '${template}'`,
    )) as unknown as unknown[];
    if (rows.length === 0) {
      const building = `${template}_building_${process.pid}`;
      await admin.db.execute(`create database "${building}"`);
      const fresh = await openPostgres(databaseUrl(url, building), { max: 1 });
      await migrateDatabase(fresh.db, 'postgres');
      await fresh.close();
      try {
        await admin.db.execute(`alter database "${building}" rename to "${template}"`);
      } catch {
        // Another run finished the same template first.
        await admin.db.execute(`drop database if exists "${building}"`);
      }
    }
    await admin.close();
    // Databases of this run carry its id, so cleaning up never touches another run in progress.
    const runPrefix = `${TEST_DATABASE_PREFIX}${randomBytes(4).toString('hex')}_`;
    project.provide('databaseTemplate', { kind: 'postgres', url, template, prefix: runPrefix });
    return async () => {
      const cleanup = await openPostgres(url, { max: 1 });
      const leftovers = (await cleanup.db.execute(
        `select datname from pg_database where datname like '${runPrefix}%'`,
      )) as unknown as Array<{ datname: string }>;
      for (const { datname } of leftovers)
        await cleanup.db.execute(`drop database if exists "${datname}" with (force)`);
      await cleanup.close();
    };
  }

  const pglite = await openPglite(undefined);
  await migrateDatabase(pglite.db, 'pglite');
  const client = (pglite.db as unknown as { $client: { dumpDataDir(c: 'none'): Promise<Blob> } }).$client;
  const dump = await client.dumpDataDir('none');
  await pglite.close();
  const directory = mkdtempSync(join(tmpdir(), 'cebs-test-'));
  const file = join(directory, 'template.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('databaseTemplate', { kind: 'pglite', file });
  return () => rmSync(directory, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseTemplate:
      | { kind: 'postgres'; url: string; template: string; prefix: string }
      | { kind: 'pglite'; file: string };
  }
}
