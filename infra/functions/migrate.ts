import { request } from 'node:https';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { databaseUrl, readSecret } from '../../lib/aws/secrets';
import { openPostgres } from '../../lib/db/client';
import { migrateDatabase } from '../../lib/db/migrate';
import { observed } from '../../lib/observability';

/**
 * The migration step of a deployment, run by a CloudFormation custom resource (Create and Update,
 * whenever drizzle/ changes) or by hand (`aws lambda invoke`, any payload). As the database's
 * admin user, through the RDS Proxy:
 *   1. applies the drizzle migrations bundled next to this file (drizzle/), and
 *   2. makes sure the application's login role exists with the password of its secret and may
 *      read and write the tables, nothing more (no DDL): the route functions log in as it.
 * It answers CloudFormation itself, so a failure fails (and rolls back) the deployment.
 */

const MIGRATIONS_FOLDER = join(dirname(fileURLToPath(import.meta.url)), 'drizzle');
/** A fresh proxy takes a few minutes to register its target; keep trying that long. */
const CONNECT_ATTEMPTS = 30;
const CONNECT_DELAY_MS = 10_000;

interface Credentials {
  username: string;
  password: string;
}

/** Traced, with the cold-start metric (lib/observability). */
export const handler = observed(migrate);

async function migrate(event: Partial<CloudFormationCustomResourceEvent>): Promise<{ migrations: number } | undefined> {
  if (!event.RequestType) return runMigrations();
  const fromCloudFormation = event as CloudFormationCustomResourceEvent;
  try {
    const data = fromCloudFormation.RequestType === 'Delete' ? {} : await runMigrations();
    await respond(fromCloudFormation, 'SUCCESS', 'migrations applied', data);
  } catch (error) {
    console.error('migration failed', error);
    await respond(fromCloudFormation, 'FAILED', error instanceof Error ? error.message : String(error), {});
  }
  return undefined;
}

async function runMigrations(): Promise<{ migrations: number }> {
  const env = (name: string) => {
    const value = process.env[name];
    if (!value) throw new Error(`${name} is not set`);
    return value;
  };
  const endpoint = { host: env('DATABASE_HOST'), port: Number(env('DATABASE_PORT')), database: env('DATABASE_NAME') };
  const admin = JSON.parse(await readSecret(env('DATABASE_ADMIN_SECRET_ARN'))) as Credentials;
  const app = JSON.parse(await readSecret(env('DATABASE_SECRET_ARN'))) as Credentials;
  const connection = await connect(databaseUrl(admin, endpoint));
  try {
    await migrateDatabase(connection.db, 'postgres', MIGRATIONS_FOLDER);
    for (const statement of applicationRoleStatements(app, endpoint.database)) await connection.db.execute(statement);
    const [row] = (await connection.db.execute(
      'select count(*)::int as n from drizzle.__drizzle_migrations',
    )) as unknown as Array<{ n: number }>;
    console.log(`migrations applied: ${row?.n ?? 0}`);
    return { migrations: row?.n ?? 0 };
  } finally {
    await connection.close();
  }
}

async function connect(url: string) {
  for (let attempt = 1; ; attempt += 1) {
    const connection = await openPostgres(url, { max: 1, ssl: 'verify-full', prepare: false });
    try {
      await connection.db.execute('select 1');
      return connection;
    } catch (error) {
      await connection.close();
      if (attempt >= CONNECT_ATTEMPTS) throw error;
      console.warn(
        `database not reachable yet (attempt ${attempt}): ${error instanceof Error ? error.message : error}`,
      );
      await new Promise((resolve) => setTimeout(resolve, CONNECT_DELAY_MS));
    }
  }
}

/** Tables the application role may only insert into and read. */
export const APPEND_ONLY_TABLES = ['audit_events'] as const;
/** Tables the application role may insert into, read and update, never empty (lib/audit's verification results). */
export const KEPT_TABLES = ['audit_verification_checkpoints'] as const;

/**
 * Idempotent: creates or updates the login role and grants it DML on everything in public, except
 * changing or removing rows of the append-only tables.
 */
export function applicationRoleStatements(app: Credentials, database: string): string[] {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(app.username)) throw new Error('Unexpected application user name');
  const role = `"${app.username}"`;
  const password = `'${app.password.replaceAll("'", "''")}'`;
  return [
    `do $$ begin create role ${role} login; exception when duplicate_object then null; end $$`,
    `alter role ${role} with login password ${password}`,
    `grant connect on database "${database.replaceAll('"', '""')}" to ${role}`,
    `grant usage on schema public to ${role}`,
    `grant select, insert, update, delete on all tables in schema public to ${role}`,
    `grant usage, select, update on all sequences in schema public to ${role}`,
    `alter default privileges in schema public grant select, insert, update, delete on tables to ${role}`,
    `alter default privileges in schema public grant usage, select, update on sequences to ${role}`,
    // The audit trail is append-only for the service (its trigger refuses changes too): run after
    // the grants above on every deployment, so no migration can hand the rights back.
    ...APPEND_ONLY_TABLES.map((table) => `revoke update, delete, truncate on "${table}" from ${role}`),
    ...KEPT_TABLES.map((table) => `revoke delete, truncate on "${table}" from ${role}`),
  ];
}

/** PUT the result to CloudFormation's presigned URL (content-type must be empty). */
function respond(
  event: CloudFormationCustomResourceEvent,
  status: 'SUCCESS' | 'FAILED',
  reason: string,
  data: object,
): Promise<void> {
  const body = JSON.stringify({
    Status: status,
    Reason: reason.slice(0, 1000),
    PhysicalResourceId: 'PhysicalResourceId' in event ? event.PhysicalResourceId : 'drizzle-migrations',
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    Data: data,
  });
  return new Promise((resolve, reject) => {
    const req = request(
      event.ResponseURL,
      { method: 'PUT', headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve());
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
