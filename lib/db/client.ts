import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { config } from '../config';
import * as schema from './schema';

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Anything that runs queries: the database or an open transaction. */
export type Executor = Database | Tx;

interface Connection {
  db: Database;
  driver: 'postgres' | 'pglite';
  close(): Promise<void>;
}

let connection: Promise<Connection> | undefined;
let ready: Connection | undefined;

/**
 * Opens the configured database once per process: postgres.js when DATABASE_URL is set,
 * otherwise embedded PGlite in DATA_DIR. PGlite is imported lazily so it never loads in the cloud.
 */
export function connectDb(): Promise<Connection> {
  connection ??= open().then((opened) => {
    ready = opened;
    return opened;
  });
  return connection;
}

/** The open database. The endpoint middleware connects before any handler runs. */
export function db(): Database {
  if (!ready) throw new Error('Database not connected: await connectDb() first');
  return ready.db;
}

export function dbDriver(): Connection['driver'] {
  if (!ready) throw new Error('Database not connected');
  return ready.driver;
}

/** Installs an already-open database (tests: one per test file). */
export function useConnection(opened: Connection): void {
  ready = opened;
  connection = Promise.resolve(opened);
}

export async function closeDb(): Promise<void> {
  const open = ready;
  ready = undefined;
  connection = undefined;
  await open?.close();
}

async function open(): Promise<Connection> {
  const { DATABASE_URL, DATA_DIR, DATABASE_SECRET_ARN } = config();
  if (DATABASE_URL) return openPostgres(DATABASE_URL);
  // Cloud (infra/): credentials from Secrets Manager, read at cold start together with the other
  // secrets; verified TLS to the RDS Proxy; unnamed statements, because named prepared
  // statements pin proxy connections.
  if (DATABASE_SECRET_ARN) {
    const { cloudDatabaseUrl, loadCloudSecrets } = await import('../aws/secrets');
    const [url] = await Promise.all([cloudDatabaseUrl(), loadCloudSecrets()]);
    return openPostgres(url, { ssl: 'verify-full', prepare: false });
  }
  return openPglite(`${DATA_DIR}/pglite`);
}

export async function openPostgres(
  url: string,
  options: { max?: number; ssl?: 'verify-full'; prepare?: boolean } = {},
): Promise<Connection> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const client = postgres(url, {
    max: options.max ?? config().DB_POOL_MAX,
    onnotice: () => {},
    ...(options.ssl ? { ssl: options.ssl } : {}),
    ...(options.prepare === false ? { prepare: false } : {}),
  });
  return {
    db: drizzle(client, { schema }) as unknown as Database,
    driver: 'postgres',
    close: () => client.end({ timeout: 5 }),
  };
}

export async function openPglite(dataDir: string | undefined, loadDataDir?: Blob): Promise<Connection> {
  const { PGlite } = await import('@electric-sql/pglite');
  if (dataDir) (await import('node:fs')).mkdirSync(dataDir, { recursive: true });
  const { drizzle } = await import('drizzle-orm/pglite');
  const client = await PGlite.create(dataDir, loadDataDir ? { loadDataDir } : {});
  return {
    db: drizzle(client, { schema }) as unknown as Database,
    driver: 'pglite',
    close: () => client.close(),
  };
}
