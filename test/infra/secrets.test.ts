import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { applicationRoleStatements } from '../../infra/functions/migrate';
import { signAccessToken, verifyAccessToken } from '../../lib/auth/jwt';
import {
  cloudDatabasePassword,
  databaseUrl,
  loadCloudSecrets,
  readSecret,
  useSecretReader,
} from '../../lib/aws/secrets';
import { config, overrideConfig, SECRET_MAX_AGE_SECONDS } from '../../lib/config';
import { db } from '../../lib/db/client';
import { rawRows } from '../../lib/db/raw-rows';

/** The cold-start secret reading of the cloud (lib/aws/secrets.ts) with an in-memory Secrets Manager. */

let restore: (() => void) | undefined;
afterEach(() => {
  vi.useRealTimers();
  restore?.();
  restore = undefined;
  useSecretReader(undefined);
});

const fakeSecrets = (values: Record<string, string>) => {
  const reads: string[] = [];
  useSecretReader(async (id) => {
    reads.push(id);
    if (!(id in values)) throw new Error(`no secret ${id}`);
    return values[id]!;
  });
  return reads;
};

describe('cloud secrets', () => {
  it('builds the postgres URL from RDS credentials and the proxy endpoint, escaping the password', () => {
    const credentials = {
      username: 'cebs_app',
      password: 'p@ss:w/rd?#',
      host: 'instance.rds.local',
      port: 5433,
      dbname: 'cebs',
    };
    expect(databaseUrl(credentials, { host: 'proxy.rds.local', port: 5432, database: 'cebs' })).toBe(
      'postgres://cebs_app:p%40ss%3Aw%2Frd%3F%23@proxy.rds.local:5432/cebs',
    );
    expect(databaseUrl(credentials)).toBe('postgres://cebs_app:p%40ss%3Aw%2Frd%3F%23@instance.rds.local:5433/cebs');
    expect(() => databaseUrl({ username: 'x', password: '' }, { host: 'h' })).toThrow(/password/);
  });

  it('reads each secret once and retries one that failed', async () => {
    let fail = true;
    let calls = 0;
    useSecretReader(async () => {
      calls += 1;
      if (fail) throw new Error('throttled');
      return 'value';
    });
    await expect(readSecret('arn:a')).rejects.toThrow('throttled');
    fail = false;
    expect(await readSecret('arn:a')).toBe('value');
    expect(await readSecret('arn:a')).toBe('value');
    expect(calls).toBe(2);
  });

  it('puts the JWT key and the non-empty Stripe keys into the config', async () => {
    restore = overrideConfig({
      JWT_SECRET_ARN: 'arn:jwt',
      STRIPE_SECRET_ARN: 'arn:stripe',
      STRIPE_SECRET_KEY: undefined,
    });
    const jwtKey = randomBytes(32).toString('hex');
    const reads = fakeSecrets({
      'arn:jwt': jwtKey,
      'arn:stripe': JSON.stringify({ STRIPE_SECRET_KEY: 'sk_test_123', STRIPE_WEBHOOK_SECRET: '', OTHER: 'ignored' }),
    });
    process.env.JWT_SECRET_ARN = 'arn:jwt';
    process.env.STRIPE_SECRET_ARN = 'arn:stripe';
    try {
      await loadCloudSecrets();
      await loadCloudSecrets();
    } finally {
      delete process.env.JWT_SECRET_ARN;
      delete process.env.STRIPE_SECRET_ARN;
    }
    expect(reads.sort()).toEqual(['arn:jwt', 'arn:stripe']);
    expect(config().JWT_SECRET).toBe(jwtKey);
    expect(config().STRIPE_SECRET_KEY).toBe('sk_test_123');
    expect(config().STRIPE_WEBHOOK_SECRET).toBeUndefined();
    expect((config() as Record<string, unknown>).OTHER).toBeUndefined();
  });

  it('signs and verifies access tokens with the key named by JWT_SECRET_ARN', async () => {
    const jwtKey = randomBytes(32).toString('hex');
    fakeSecrets({ 'arn:jwt-signing': jwtKey });
    process.env.JWT_SECRET_ARN = 'arn:jwt-signing';
    const savedKey = process.env.JWT_SECRET;
    delete process.env.JWT_SECRET;
    restore = overrideConfig({ JWT_SECRET: undefined, JWT_SECRET_ARN: 'arn:jwt-signing' });
    try {
      const { token } = await signAccessToken({ userId: 'u1', sessionId: 's1' });
      expect(config().JWT_SECRET).toBe(jwtKey);
      expect(await verifyAccessToken(token)).toEqual({ userId: 'u1', sessionId: 's1' });
    } finally {
      delete process.env.JWT_SECRET_ARN;
      process.env.JWT_SECRET = savedKey;
    }
  });
});

/** Moves the wall clock (Date only: Powertools' cache reads it) by `seconds`, without waiting. */
function advanceSeconds(seconds: number) {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + seconds * 1000);
}

describe('cloud secrets in a warm function (issue 32)', () => {
  it('reads a secret again once past its time-to-live, not before', async () => {
    const values: Record<string, string> = { 'arn:db': 'first' };
    const reads = fakeSecrets(values);
    expect(await readSecret('arn:db', 300)).toBe('first');
    values['arn:db'] = 'second';
    advanceSeconds(299);
    expect(await readSecret('arn:db', 300)).toBe('first');
    advanceSeconds(2);
    expect(await readSecret('arn:db', 300)).toBe('second');
    expect(reads).toEqual(['arn:db', 'arn:db']);
  });

  it('signs with a JWT key rotated by hand once its time-to-live has passed', async () => {
    const values: Record<string, string> = { 'arn:jwt-rotated': randomBytes(32).toString('hex') };
    fakeSecrets(values);
    restore = overrideConfig({ JWT_SECRET: undefined, JWT_SECRET_ARN: 'arn:jwt-rotated' });
    const before = await signAccessToken({ userId: 'u1', sessionId: 's1' });
    values['arn:jwt-rotated'] = randomBytes(32).toString('hex');
    advanceSeconds(SECRET_MAX_AGE_SECONDS.jwt + 1);
    const after = await signAccessToken({ userId: 'u1', sessionId: 's1' });
    expect(config().JWT_SECRET).toBe(values['arn:jwt-rotated']);
    expect(await verifyAccessToken(after.token)).toEqual({ userId: 'u1', sessionId: 's1' });
    // The old key no longer verifies: a rotation by hand signs everyone out (infra/README.md).
    expect(await verifyAccessToken(before.token)).toBeNull();
  });

  it('gives new database connections the rotated password once its time-to-live has passed', async () => {
    const credentials = (password: string) => JSON.stringify({ username: 'cebs_app', password, host: 'db.local' });
    const values: Record<string, string> = { 'arn:db-app': credentials('old-password') };
    fakeSecrets(values);
    restore = overrideConfig({ DATABASE_SECRET_ARN: 'arn:db-app' });
    expect(await cloudDatabasePassword()).toBe('old-password');
    values['arn:db-app'] = credentials('new-password');
    advanceSeconds(SECRET_MAX_AGE_SECONDS.database + 1);
    expect(await cloudDatabasePassword()).toBe('new-password');
  });

  it('unsets Stripe keys removed from the secret', async () => {
    const values: Record<string, string> = { 'arn:stripe-keys': JSON.stringify({ STRIPE_SECRET_KEY: 'sk_test_1' }) };
    fakeSecrets(values);
    restore = overrideConfig({ STRIPE_SECRET_ARN: 'arn:stripe-keys', STRIPE_SECRET_KEY: undefined });
    await loadCloudSecrets();
    expect(config().STRIPE_SECRET_KEY).toBe('sk_test_1');
    values['arn:stripe-keys'] = JSON.stringify({ STRIPE_SECRET_KEY: '' });
    advanceSeconds(SECRET_MAX_AGE_SECONDS.stripe + 1);
    await loadCloudSecrets();
    expect(config().STRIPE_SECRET_KEY).toBeUndefined();
    expect(config().STRIPE_SECRET_ARN).toBe('arn:stripe-keys');
  });
});

/** Rows of a raw query on either driver (postgres.js answers an array, PGlite `{ rows }`). */
async function rowsOf<T>(query: string): Promise<[T, ...T[]]> {
  return (await rawRows<T>(db(), sql.raw(query))) as [T, ...T[]];
}

describe('migration step: application role', () => {
  it('creates the login role with DML grants only, idempotently', async () => {
    const role = `cebs_app_test_${randomBytes(4).toString('hex')}`;
    const [{ name }] = await rowsOf<{ name: string }>('select current_database() as name');
    const statements = applicationRoleStatements({ username: role, password: "it's-a-secret" }, name);
    try {
      for (const statement of [...statements, ...statements]) await db().execute(statement);
      const rows = await rowsOf<{ privilege_type: string }>(
        `select privilege_type from information_schema.role_table_grants where grantee = '${role}' and table_name = 'users' order by 1`,
      );
      expect(rows.map((row) => row.privilege_type)).toEqual(['DELETE', 'INSERT', 'SELECT', 'UPDATE']);
      // The audit trail: read and append only, however often the statements run.
      const audit = await rowsOf<{ privilege_type: string }>(
        `select privilege_type from information_schema.role_table_grants where grantee = '${role}' and table_name = 'audit_events' order by 1`,
      );
      expect(audit.map((row) => row.privilege_type)).toEqual(['INSERT', 'SELECT']);
      // Verification results: moved on, never removed.
      const checkpoints = await rowsOf<{ privilege_type: string }>(
        `select privilege_type from information_schema.role_table_grants where grantee = '${role}' and table_name = 'audit_verification_checkpoints' order by 1`,
      );
      expect(checkpoints.map((row) => row.privilege_type)).toEqual(['INSERT', 'SELECT', 'UPDATE']);
    } finally {
      await db().execute(`drop owned by "${role}"`);
      await db().execute(`drop role if exists "${role}"`);
    }
    expect(() => applicationRoleStatements({ username: 'x"; drop table users; --', password: 'p' }, name)).toThrow(
      /user name/,
    );
  });
});
