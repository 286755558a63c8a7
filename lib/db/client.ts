import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { config } from '../config';
import { invitations, organizationMembers, organizationPlans, organizations } from './schema/organizations';
import * as relations from './schema/relations';
import { users } from './schema/users';

/**
 * What drizzle's relational queries (`db.query.*`) need: the tables they read and their relations
 * (lib/db/schema/relations.ts). Only these, not every table of lib/db/schema: each route imports
 * the tables it queries from their own module, so a route loads only those (issue 35: cold
 * starts). A relational query on another table does not type-check: add the table here first.
 */
const schema = { users, organizationMembers, organizations, organizationPlans, invitations, ...relations };

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** Anything that runs queries: the database or an open transaction. */
export type Executor = Database | Tx;

export interface Connection {
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
  connection ??= open().then(
    (opened) => {
      ready = opened;
      return opened;
    },
    (error: unknown) => {
      // Not cached: a cold start that could not read its credentials tries again on the next request.
      connection = undefined;
      throw error;
    },
  );
  return connection;
}

/** The open database. The endpoint middleware connects before any handler runs. */
export function db(): Database {
  if (!ready) throw new Error('Database not connected: await connectDb() first');
  return ready.db;
}

/**
 * A per-request query prepared once per database (drizzle `.prepare(name)` with placeholders):
 * drizzle builds its SQL once, and on postgres.js it runs as a named prepared statement (one round
 * trip, parsed and planned once per connection) where an unprepared statement with parameters
 * costs two round trips and a parse each time. With `prepare: false` (the cloud's RDS Proxy) it
 * runs unnamed. Prepared again when the connection is swapped (tests do).
 */
export function preparedPerDatabase<Query>(prepare: (database: Database) => Query): () => Query {
  let prepared: { database: Database; query: Query } | undefined;
  return () => {
    const database = db();
    if (prepared?.database !== database) prepared = { database, query: prepare(database) };
    return prepared.query;
  };
}

export function dbDriver(): Connection['driver'] {
  if (!ready) throw new Error('Database not connected');
  return ready.driver;
}

/** The open connection, to put back after a test swapped in another (fault tests). */
export function currentConnection(): Connection | undefined {
  return ready;
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
  // The service's own queries are cut off below the function's timeout (set per function by the
  // stack), so a stuck statement answers 503 in our envelope instead of a gateway timeout.
  const statementTimeoutMs = config().DB_STATEMENT_TIMEOUT_MS;
  if (DATABASE_URL) return openPostgres(DATABASE_URL, { statementTimeoutMs });
  // Cloud (infra/): credentials from Secrets Manager, read at cold start together with the other
  // secrets; verified TLS to the RDS Proxy; unnamed statements, because named prepared
  // statements pin proxy connections.
  if (DATABASE_SECRET_ARN) {
    const { cloudDatabaseUrl, cloudDatabasePassword, loadCloudSecrets } = await import('../aws/secrets');
    const [url] = await Promise.all([cloudDatabaseUrl(), loadCloudSecrets()]);
    // Each new connection of the pool asks for the password, read again past its time-to-live:
    // after a rotation by hand, warm functions open new connections with the new password.
    return openPostgres(url, {
      ssl: 'verify-full',
      prepare: false,
      statementTimeoutMs,
      password: cloudDatabasePassword,
    });
  }
  return openPglite(`${DATA_DIR}/pglite`);
}

/**
 * A postgres.js pool. A server that cannot be reached fails the query within the connect timeout
 * (DB_CONNECT_TIMEOUT_SECONDS) rather than the driver's default 30 s; `statementTimeoutMs` (0 or
 * unset: none) and `jit = off` are sent as startup parameters, so they need no SET statement (which
 * would pin RDS Proxy connections).
 */
export async function openPostgres(
  url: string,
  options: {
    max?: number;
    ssl?: 'verify-full';
    prepare?: boolean;
    statementTimeoutMs?: number;
    /** Asked for on every new connection, instead of the URL's password. */
    password?: () => Promise<string>;
  } = {},
): Promise<Connection> {
  const { default: postgres } = await import('postgres');
  const { drizzle } = await import('drizzle-orm/postgres-js');
  const client = postgres(url, {
    max: options.max ?? config().DB_POOL_MAX,
    connect_timeout: config().DB_CONNECT_TIMEOUT_SECONDS,
    // The driver waits before reconnecting, growing with every failure of the pool up to 20 s: during
    // an outage every request then hung that long. Capped at 1 s, a request fails (503) or recovers
    // within the connect timeout plus a second.
    backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, 1),
    connection: {
      // JIT compiles the plan of any statement estimated costly, adding 10-40 ms before its first
      // row: an API answering in tens of milliseconds pays it on its larger reads (a search, a
      // tag filter over a long thread) and gains nothing (docs/decisions.md, issue 34).
      jit: 'off',
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
    },
    onnotice: () => {},
    // postgres.js keeps every statement it prepared on a connection for the connection's life, a
    // cache with no size bound: the driver's default lifetime (30 to 60 minutes, random per
    // connection) is its bound, kept on purpose (issue 36). Our statements are a fixed set of
    // texts, except an `inArray` list, whose text changes with its length.
    ...(options.ssl ? { ssl: options.ssl } : {}),
    ...(options.prepare === false ? { prepare: false } : {}),
    ...(options.password ? { password: options.password } : {}),
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
