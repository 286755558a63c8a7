import postgres from 'postgres';
import { openPostgres } from '../../lib/db/client';
import { migrateDatabase } from '../../lib/db/migrate';
import { databaseUrl } from '../harness/databases';

/** Drops and recreates `name` beside `adminUrl`, migrated; returns its URL and an open connection. */
export async function freshBenchDatabase(adminUrl: string, name: string, poolSize = 1) {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = databaseUrl(adminUrl, name);
  const connection = await openPostgres(url, { max: poolSize });
  await migrateDatabase(connection.db, 'postgres');
  return { url, connection };
}
