import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { decodeJwt, SignJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { routes } from '../../functions/routes';
import { connectDb, db, openPostgres, useConnection } from '../../lib/db/client';
import { sessions, users } from '../../lib/db/schema';
import { logger } from '../../lib/log';
import { hashPassword, hashToken } from '../../lib/secrets';
import { createUser, uniqueEmail } from '../harness/actors';
import { invoke } from '../harness/invoke';
import { mintAutomationToken, revokeAutomationToken, SERVICE_KEY } from '../harness/tokens';
import { captureLogOutput } from '../harness/log-output';

/**
 * Logs carry no secrets or personal data (issue 15): failure scenarios run through the real
 * handlers with the logger writing, and what it wrote must hold none of the test's emails,
 * passwords, tokens, token hashes, password hashes or Authorization values.
 */

let written: string[] = [];
let levelBefore: ReturnType<typeof logger.getLevelName>;

beforeEach(() => {
  written = [];
  levelBefore = logger.getLevelName();
  logger.setLogLevel('INFO');
  captureLogOutput(written);
});

afterEach(() => {
  vi.restoreAllMocks();
  logger.setLogLevel(levelBefore);
});

const output = () => written.join('');

/** Asserts that the captured log output holds none of `secrets` (and that something was logged). */
function expectNoneLogged(secrets: Record<string, string>): void {
  const text = output();
  expect(text.length, 'nothing was logged: the scenario proves nothing').toBeGreaterThan(0);
  for (const [label, secret] of Object.entries(secrets)) {
    expect(text.includes(secret), `${label} appears in the log:\n${text}`).toBe(false);
    // Also as JSON escapes it (a hash or token inside a JSON string is written as is; an email too).
    expect(text.includes(JSON.stringify(secret).slice(1, -1)), `${label} appears in the log`).toBe(false);
  }
}

/** Runs `act` with the database swapped for one nobody listens on, then puts the test's own back. */
async function withDatabaseDown(act: () => Promise<void>): Promise<void> {
  const own = await connectDb();
  const down = await openPostgres('postgres://root@127.0.0.1:1/nope', { max: 1 });
  useConnection(down);
  try {
    await act();
  } finally {
    useConnection(own);
    await down.close().catch(() => {});
  }
}

describe('log redaction: database down', () => {
  it('logs neither the email nor the password of a login, nor a bearer token or its hash', async () => {
    const user = await createUser();
    const automation = await mintAutomationToken(user, ['profile:read']);
    await withDatabaseDown(async () => {
      const login = await invoke(routes.login, { body: { email: user.email, password: user.password } });
      expect(login.status).toBeGreaterThanOrEqual(500);
      const profile = await invoke(routes.getProfile, { token: user.accessToken });
      expect(profile.status).toBeGreaterThanOrEqual(500);
      const refresh = await invoke(routes.refreshToken, { body: { refreshToken: user.refreshToken } });
      expect(refresh.status).toBeGreaterThanOrEqual(500);
      if (automation) {
        const byAutomation = await invoke(routes.getProfile, { token: automation.token });
        expect(byAutomation.status).toBeGreaterThanOrEqual(400);
      }
    });
    expectNoneLogged({
      email: user.email,
      password: user.password,
      accessToken: user.accessToken,
      authorization: `Bearer ${user.accessToken}`,
      refreshToken: user.refreshToken,
      refreshTokenHash: hashToken(user.refreshToken),
      ...(automation ? { automationToken: automation.token, automationTokenHash: hashToken(automation.token) } : {}),
    });
  });

  it('logs no hash of an unknown opaque token sent while the database is down', async () => {
    const garbage = `cebs_at_${randomBytes(32).toString('base64url')}`;
    await withDatabaseDown(async () => {
      const result = await invoke(routes.getProfile, { token: garbage });
      expect(result.status).toBeGreaterThanOrEqual(500);
    });
    expectNoneLogged({ token: garbage, tokenHash: hashToken(garbage) });
  });
});

describe('log redaction: constraint errors', () => {
  it('keeps the SQLSTATE and the SQL text of a unique violation, never the email or the password hash', async () => {
    const user = await createUser();
    const passwordHash = await hashPassword(`pw-${randomBytes(6).toString('hex')}`);
    const error = await db()
      .insert(users)
      .values({ email: user.email, name: 'Duplicate', passwordHash })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(Error);
    logger.error('request failed', { error });
    expectNoneLogged({ email: user.email, passwordHash });
    const text = output();
    expect(text).toContain('23505');
    expect(text).toContain('insert into \\"users\\"');
  });

  it('never logs a token hash from a unique violation on sessions', async () => {
    const user = await createUser();
    const [existing] = await db().select().from(sessions).where(eq(sessions.userId, user.id)).limit(1);
    const error = await db()
      .insert(sessions)
      .values({ userId: user.id, kind: 'login', tokenHash: existing!.tokenHash, expiresAt: new Date() })
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(Error);
    logger.error('request failed', { error });
    expectNoneLogged({ tokenHash: existing!.tokenHash, userId: user.id });
    expect(output()).toContain('23505');
  });
  it('drops the value Postgres echoes in an invalid-input message', async () => {
    const value = `secret-value-${randomBytes(4).toString('hex')}`;
    const error = await db()
      .execute(sql`select ${value}::uuid`)
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(error).toBeInstanceOf(Error);
    logger.error('request failed', { error });
    expectNoneLogged({ value });
    expect(output()).toContain('22P02');
  });
});

describe('log redaction: bad tokens', () => {
  it('logs none of the bearer tokens it refuses', async () => {
    const user = await createUser();
    const automation = await mintAutomationToken(user, ['profile:read']);
    if (automation) await revokeAutomationToken(user, automation.id);
    const claims = decodeJwt(user.accessToken);
    const expired = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 3600 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(SERVICE_KEY);
    const tokens = {
      garbage: `garbage-${randomBytes(24).toString('hex')}`,
      expiredJwt: expired,
      malformedJwt: `eyJhbGciOiJIUzI1NiJ9.${Buffer.from('{not json').toString('base64url')}.${randomBytes(32).toString('base64url')}`,
      unknownLegacy: `cebs_lt_${randomBytes(32).toString('base64url')}`,
      ...(automation ? { revoked: automation.token } : {}),
    };
    written.length = 0;
    for (const token of Object.values(tokens)) {
      const result = await invoke(routes.getProfile, { token });
      expect(result.status, JSON.stringify(result.body)).toBe(401);
    }
    const refresh = await invoke(routes.refreshToken, { body: { refreshToken: tokens.unknownLegacy } });
    expect(refresh.status).toBe(404);
    const hashes = Object.fromEntries(
      Object.entries(tokens).map(([label, token]) => [`${label}Hash`, hashToken(token)]),
    );
    expectNoneLogged({ ...tokens, ...hashes });
  });
});

describe('log redaction: the scrubber', () => {
  const logged = (attributes: Record<string, unknown>) => {
    written.length = 0;
    logger.error('scrubber check', attributes);
    return output();
  };

  it('scrubs email addresses from messages and strings anywhere', () => {
    const email = uniqueEmail('scrub');
    const text = logged({ note: `sent to ${email} twice`, nested: { list: [`<${email}>`] } });
    expect(text).not.toContain(email);
    expect(text).toContain('sent to');
  });

  it('scrubs JWTs and bearer values', async () => {
    const user = await createUser();
    const text = logged({ header: `Bearer ${user.accessToken}`, raw: `token ${user.accessToken} end` });
    expect(text).not.toContain(user.accessToken);
    expect(text).not.toContain(user.accessToken.split('.')[2]!);
  });

  it('scrubs scrypt password hashes', async () => {
    const hash = await hashPassword('correct horse battery staple');
    const text = logged({ stored: `row (${hash}) kept` });
    expect(text).not.toContain(hash);
    expect(text).not.toContain(hash.split('$').at(-1)!);
    expect(text).not.toContain(hash.split('$').at(-2)!);
  });

  it('scrubs opaque tokens of every kind and their SHA-256 hashes', () => {
    const tokens = ['cebs_rt_', 'cebs_at_', 'cebs_lt_', 'cebs_ev_', 'cebs_pr_', 'cebs_inv_'].map(
      (prefix) => `${prefix}${randomBytes(32).toString('base64url')}`,
    );
    const text = logged({ seen: tokens.join(' '), hashes: tokens.map(hashToken).join(',') });
    for (const token of tokens) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(token.slice(9));
      expect(text).not.toContain(hashToken(token));
    }
  });

  it('redacts keys named like secrets or personal data, whatever their value', () => {
    const text = logged({
      password: 'hunter2-plain',
      passwordHash: 'x-hash-value',
      Authorization: 'Basic dXNlcjpwYXNz',
      headers: { cookie: 'session=abc123', 'x-request-id': 'req-keep-me' },
      body: { anything: 'request-body-value' },
      user: { Email: 'not-an-address-but-an-email-field', refreshToken: 'short', accessToken: 'short2' },
      secret: 'sssh',
      params: ['p1-value'],
    });
    for (const value of [
      'hunter2-plain',
      'x-hash-value',
      'dXNlcjpwYXNz',
      'abc123',
      'request-body-value',
      'not-an-address-but-an-email-field',
      '"short"',
      'short2',
      'sssh',
      'p1-value',
    ])
      expect(text).not.toContain(value);
    expect(text).toContain('req-keep-me');
    expect(text).toContain('[redacted]');
  });

  it("cuts drizzle's parameter list from an error message and keeps the SQL text", () => {
    const email = uniqueEmail('drizzle');
    const error = Object.assign(
      new Error(`Failed query: select "id" from "users" where "users"."email" = $1 limit $2\nparams: ${email},1`),
      { query: 'select "id" from "users" where "users"."email" = $1 limit $2', params: [email, 1] },
    );
    const text = logged({ error });
    expect(text).not.toContain(email);
    expect(text).toContain('Failed query: select \\"id\\" from \\"users\\"');
    expect(text).not.toMatch(/params:/);
  });

  it("drops a database error's detail, where and parameters, and keeps its code and constraint", () => {
    const email = uniqueEmail('detail');
    const cause = Object.assign(new Error('duplicate key value violates unique constraint "users_email_key"'), {
      name: 'PostgresError',
      code: '23505',
      severity: 'ERROR',
      detail: `Key (email)=(${email}) already exists.`,
      where: `SQL function "f" statement 1 (value ${'a'.repeat(3)}-where-value)`,
      hint: 'hint-with-data',
      constraint_name: 'users_email_key',
      table_name: 'users',
      routine: '_bt_check_unique',
      parameters: [email, 'parameter-value'],
      unexpected: 'unknown-property-value',
    });
    const error = Object.assign(
      new Error(`Failed query: insert into "users" ("email") values ($1)\nparams: ${email}`),
      {
        query: 'insert into "users" ("email") values ($1)',
        params: [email],
        cause,
      },
    );
    const text = logged({ error });
    for (const value of [email, 'where-value', 'hint-with-data', 'parameter-value', 'unknown-property-value'])
      expect(text).not.toContain(value);
    for (const kept of ['23505', 'users_email_key', '_bt_check_unique', 'PostgresError', 'insert into \\"users\\"'])
      expect(text).toContain(kept);
  });
});
