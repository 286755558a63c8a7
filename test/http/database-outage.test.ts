import { eq, sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { routes } from '../../functions/routes';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { loadHandler } from '../../infra/local/router';
import { config, overrideConfig } from '../../lib/config';
import { type Connection, currentConnection, db, openPostgres, useConnection } from '../../lib/db/client';
import { emailOutbox, invitations, users } from '../../lib/db/schema';
import { createUser, type TestUser, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { type FaultProxy, holdRows, startFaultProxy } from '../harness/faults';

/**
 * The database going away (issue 15). The service's pool is put behind a TCP proxy the test
 * controls: connections refused or dropped (a stopped server), accepted and never answered (a
 * network partition), cut mid-query (a restart or failover), and a statement outliving its timeout.
 * Each answers 503 SERVICE_UNAVAILABLE with Retry-After in the error envelope within about 3 s,
 * loses nothing committed, changes nothing half-way, and the same pool serves again once the
 * database is back, without a restart.
 */

const onServer = inject('databaseTemplate').kind === 'postgres';

/** Elapsed milliseconds of `work`. */
async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

function expectUnavailable(answer: Awaited<ReturnType<typeof invoke>>) {
  expectError(answer, 503, 'SERVICE_UNAVAILABLE');
  expect(answer.headers['retry-after']).toBe('5');
  expect(answer.headers['x-request-id']).toBeTruthy();
  expect(answer.body).toMatchObject({ statusCode: 503, timestamp: expect.any(String), requestId: expect.any(String) });
}

let own: Connection;
let swapped: Connection | undefined;

beforeAll(() => {
  own = currentConnection()!;
});

afterEach(async () => {
  useConnection(own);
  await swapped?.close().catch(() => {});
  swapped = undefined;
});

/** Serves the next requests through `url` (a pool of its own, as a Lambda instance has). */
async function servePoolAt(url: string, options: { statementTimeoutMs?: number } = {}) {
  swapped = await openPostgres(url, { max: 4, ...options });
  useConnection(swapped);
}

describe('a database that cannot be reached (both databases: the pool is postgres.js either way)', () => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    // Nothing behind it: every connection is refused or held.
    proxy = await startFaultProxy({ host: '127.0.0.1', port: 9 });
    return () => proxy.close();
  });

  it('connections dropped at once (server stopped): 503 in the envelope with Retry-After, not 500', async () => {
    proxy.setMode('drop');
    await servePoolAt(`postgres://root@127.0.0.1:${proxy.port}/nowhere`);
    const { result, ms } = await timed(() => invoke(routes.login, { body: { email: 'a@example.com', password: 'x' } }));
    expectUnavailable(result);
    expect(ms).toBeLessThan(3_000);
  });

  it('connections accepted and never answered (partition): 503 once the connect timeout passes, not a hang', async () => {
    proxy.setMode('hang');
    await servePoolAt(`postgres://root@127.0.0.1:${proxy.port}/nowhere`);
    const { result, ms } = await timed(() => invoke(routes.login, { body: { email: 'a@example.com', password: 'x' } }));
    expectUnavailable(result);
    // The connect timeout (DB_CONNECT_TIMEOUT_SECONDS) bounds it; the driver's default was 30 s.
    expect(ms).toBeGreaterThanOrEqual(config().DB_CONNECT_TIMEOUT_SECONDS * 1000 - 100);
    expect(ms).toBeLessThan(config().DB_CONNECT_TIMEOUT_SECONDS * 1000 + 1_500);
  });
});

describe('a request still waiting near the function timeout (both databases)', () => {
  it('answers 503 in the envelope a second before the timeout, whatever it waits for', async () => {
    // A pool that would wait 30 s for a connection (the driver's default), behind a host that never answers.
    const proxy = await startFaultProxy({ host: '127.0.0.1', port: 9 });
    proxy.setMode('hang');
    const restore = overrideConfig({ DB_CONNECT_TIMEOUT_SECONDS: 30 });
    try {
      await servePoolAt(`postgres://root@127.0.0.1:${proxy.port}/nowhere`);
    } finally {
      restore();
    }
    const route = routes.login;
    const event = buildApiGatewayEvent(
      route,
      {
        method: route.method,
        url: route.path,
        headers: { 'content-type': 'application/json', 'x-request-id': 'deadline-test-0001' },
        body: JSON.stringify({ email: 'a@example.com', password: 'x' }),
        sourceIp: '203.0.113.10',
      },
      {},
    );
    const handler = await loadHandler(route);
    const { result, ms } = await timed(() => handler(event, buildLambdaContext(route, 2_500)));
    await proxy.close();
    expect(result.statusCode).toBe(503);
    expect(result.headers).toMatchObject({ 'Retry-After': '5', 'X-Request-Id': 'deadline-test-0001' });
    expect(JSON.parse(result.body!)).toMatchObject({
      statusCode: 503,
      error: { code: 'SERVICE_UNAVAILABLE' },
      requestId: 'deadline-test-0001',
    });
    expect(ms).toBeGreaterThanOrEqual(1_400);
    expect(ms).toBeLessThan(2_500);
  });
});

describe.runIf(onServer)('the PostgreSQL server going away and coming back', () => {
  let proxy: FaultProxy;
  let proxiedUrl: string;
  let user: TestUser;

  beforeAll(async () => {
    const template = inject('databaseTemplate');
    if (template.kind !== 'postgres') return;
    const server = new URL(template.url);
    proxy = await startFaultProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const [{ name }] = (await db().execute(sql`select current_database() as name`)) as unknown as [{ name: string }];
    const url = new URL(template.url);
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    url.pathname = `/${name}`;
    proxiedUrl = url.toString();
    user = await createUser();
    return () => proxy.close();
  });

  afterEach(() => proxy.setMode('forward'));

  const profileName = async () => (await own.db.select().from(users).where(eq(users.id, user.id)))[0]!.name;

  it('down: reads and writes answer 503 and change nothing; back up: the same pool serves again', async () => {
    await servePoolAt(proxiedUrl);
    const as = { token: user.accessToken };
    expectData(await invoke(routes.getProfile, as));
    const nameBefore = await profileName();

    proxy.setMode('drop');
    proxy.cutAll();
    // As a stopping server's FATAL does, the resets reach the pool before the next request.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const read = await timed(() => invoke(routes.getProfile, as));
    expectUnavailable(read.result);
    expect(read.ms).toBeLessThan(3_000);
    expectUnavailable(await invoke(routes.updateProfile, { ...as, body: { name: 'Renamed During Outage' } }));
    expect(await profileName()).toBe(nameBefore);

    proxy.setMode('forward');
    expect(expectData(await invoke(routes.getProfile, as))).toMatchObject({ id: user.id, name: nameBefore });
    expectData(await invoke(routes.updateProfile, { ...as, body: { name: 'Renamed After Outage' } }));
    expect(await profileName()).toBe('Renamed After Outage');
  });

  it('a connection cut mid-transaction (restart, failover): 503, and none of its writes commit', async () => {
    await servePoolAt(proxiedUrl);
    const as = { token: user.accessToken };
    const invitee = uniqueEmail('cut-invitee');
    // Hold the organization's plan row (the allowance lock an invitation takes first), so the
    // invitation's transaction waits inside it; then cut the connection under it.
    const holding = holdRows(
      own.db,
      sql`select 1 from organization_plans where organization_id = ${user.organizationId} for update`,
    );
    await holding.taken;
    const invite = invoke(routes.inviteUsers, {
      ...as,
      path: { orgId: user.organizationId },
      body: { emails: [invitee] },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    proxy.cutAll();
    expectUnavailable(await invite);
    await holding.release();
    expect(await own.db.select().from(invitations).where(eq(invitations.email, invitee))).toEqual([]);
    expect(await own.db.select().from(emailOutbox).where(eq(emailOutbox.toAddress, invitee))).toEqual([]);

    // The pool reconnects by itself: the same invitation goes through.
    expect(
      (await invoke(routes.inviteUsers, { ...as, path: { orgId: user.organizationId }, body: { emails: [invitee] } }))
        .status,
    ).toBe(201);
    expect(await own.db.select().from(invitations).where(eq(invitations.email, invitee))).toHaveLength(1);
  });

  it('a statement that outlives the statement timeout is cancelled: 503, nothing changed, next request fine', async () => {
    await servePoolAt(proxiedUrl, { statementTimeoutMs: 400 });
    const as = { token: user.accessToken };
    const nameBefore = await profileName();
    const holding = holdRows(own.db, sql`select id from users where id = ${user.id} for update`);
    await holding.taken;
    const { result } = await timed(() => invoke(routes.updateProfile, { ...as, body: { name: 'Too Slow' } }));
    await holding.release();
    expectUnavailable(result);
    expect(await profileName()).toBe(nameBefore);
    expectData(await invoke(routes.updateProfile, { ...as, body: { name: 'In Time' } }));
    expect(await profileName()).toBe('In Time');
  });
});
