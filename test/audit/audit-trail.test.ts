import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';
import { routes } from '../../functions/routes';
import { eventHash, GENESIS_HASH } from '../../lib/audit';
import { db } from '../../lib/db/client';
import { auditChainHeads, auditEvents, cases, organizationMembers } from '../../lib/db/schema';
import { addMember, createUser, type TestUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { putOnPlan } from '../harness/billing';
import { auditChainOf, auditEventsOfRequest } from '../harness/audit';

const onServer = inject('databaseTemplate').kind === 'postgres';

const eventsOf = (organizationId: string) => auditChainOf(organizationId);

/** The chain as a verifier sees it: 1, 2, 3… from the genesis hash, each hash recomputed, the head on the last. */
async function expectIntactChain(organizationId: string): Promise<number> {
  const events = await eventsOf(organizationId);
  let previous = GENESIS_HASH;
  events.forEach((event, index) => {
    expect(event.sequence).toBe(index + 1);
    expect(event.prevHash).toBe(previous);
    expect(eventHash(event)).toBe(event.hash);
    previous = event.hash;
  });
  const [head] = await db().select().from(auditChainHeads).where(eq(auditChainHeads.organizationId, organizationId));
  expect(head).toMatchObject({ sequence: events.length, hash: previous });
  return events.length;
}

/** The message of a database error and of what it wraps (drizzle wraps the driver's error). */
async function failureOf(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    const texts: string[] = [];
    for (let e: unknown = error; e instanceof Error; e = e.cause) texts.push(e.message);
    return texts.join(' / ');
  }
  throw new Error('expected the statement to fail');
}

const caseAs = (
  caller: TestUser,
  name: string,
  organizationId = caller.organizationId,
  headers: Record<string, string> = {},
) =>
  invoke(routes.createCase, {
    token: caller.accessToken,
    organization: organizationId,
    body: { name },
    headers,
  });

describe('audit trail: append-only, chained, written with the change', () => {
  it('records who, from where, through which request, and what', async () => {
    const owner = await createUser();
    const requestId = `req-${randomBytes(6).toString('hex')}`;
    const created = expectData(
      await invoke(routes.createCase, {
        token: owner.accessToken,
        organization: owner.organizationId,
        body: { name: 'Doe v. Roe' },
        ip: '198.51.100.7',
        headers: { 'x-request-id': requestId, 'user-agent': 'Firm App/2.1' },
      }),
      201,
    );
    const [event] = await auditEventsOfRequest(requestId);
    expect(event).toMatchObject({
      organizationId: owner.organizationId,
      action: 'case.created',
      actorType: 'user',
      actorUserId: owner.id,
      caseId: created.id,
      targetType: 'case',
      targetId: created.id,
      ip: '198.51.100.7',
      userAgent: 'Firm App/2.1',
      clientRequestId: requestId,
      metadata: { name: 'Doe v. Roe' },
    });
    expect(event!.tokenId).toMatch(/^[0-9a-f-]{36}$/);
    await expectIntactChain(owner.organizationId);
  });

  it("chains the service's own request id; the client's X-Request-Id is kept apart and still echoed (issue 31)", async () => {
    // Prepare
    const owner = await createUser();
    const clientId = `client-${randomBytes(6).toString('hex')}`;
    // Act
    const result = await caseAs(owner, 'Echoed', owner.organizationId, { 'x-request-id': clientId });
    // Assess
    expectData(result, 201);
    expect(result.headers['x-request-id']).toBe(clientId);
    const [event] = await auditEventsOfRequest(clientId);
    expect(event!.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(event!.requestId).not.toBe(clientId);
    expect(event!.clientRequestId).toBe(clientId);
    // Kept beside the chain: the hash does not cover it.
    expect(eventHash({ ...event!, clientRequestId: 'something-else' } as typeof event & {})).toBe(event!.hash);
    await expectIntactChain(owner.organizationId);
  });

  it.each([
    ['over 128 characters', 'x'.repeat(129)],
    ['with spaces and quotes', 'my "request" id'],
    ['with a control character', 'request-\u0007-id'],
  ])('keeps no X-Request-Id %s: neither in the chain nor beside it', async (_label, offered) => {
    const owner = await createUser();
    const result = await caseAs(owner, 'Unsafe id', owner.organizationId, { 'x-request-id': offered });
    const created = expectData(result, 201);
    expect(result.headers['x-request-id']).not.toBe(offered);
    const [event] = await db().select().from(auditEvents).where(eq(auditEvents.caseId, created.id));
    expect(event!.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(event!.clientRequestId).toBeNull();
  });

  it('records a user agent bounded to 200 characters, cut with an ellipsis (issue 31)', async () => {
    const owner = await createUser();
    const agent = `Agent/${'a'.repeat(394)}`;
    const created = expectData(await caseAs(owner, 'Long agent', owner.organizationId, { 'user-agent': agent }), 201);
    const [event] = await db().select().from(auditEvents).where(eq(auditEvents.caseId, created.id));
    expect([...event!.userAgent!]).toHaveLength(200);
    expect(event!.userAgent).toBe(`${agent.slice(0, 199)}\u2026`);
    await expectIntactChain(owner.organizationId);
  });

  it('hashes exactly what it stores, whatever the text (the database and any RFC 8785 verifier agree)', async () => {
    const owner = await createUser();
    // More cases than the free plan's 3 a month: a tier without a case cap.
    await putOnPlan(owner, 'tier5', { card: true });
    const start = await expectIntactChain(owner.organizationId);
    for (const name of [
      'Müller v. 東京 — “quoted” \\ back\\slash',
      'emoji 🚀 and \u2028 line separator',
      'tab\there\u0001',
      // The events reach the database as a dollar-quoted literal: nothing in them may end it.
      "$$ $audit_0$ '); drop table users; --",
    ])
      expectData(await caseAs(owner, name), 201);
    expect(await expectIntactChain(owner.organizationId)).toBe(start + 4);
  });

  it('records a write once, however often it is replayed with its Idempotency-Key', async () => {
    const owner = await createUser();
    const send = () =>
      invoke(routes.createCase, {
        token: owner.accessToken,
        organization: owner.organizationId,
        body: { name: 'Retried' },
        headers: { 'idempotency-key': `audit-${randomBytes(6).toString('hex')}-fixed` },
      });
    const key = `audit-replay-${randomBytes(6).toString('hex')}`;
    const sendWithKey = () =>
      invoke(routes.createCase, {
        token: owner.accessToken,
        organization: owner.organizationId,
        body: { name: 'Retried' },
        headers: { 'idempotency-key': key },
      });
    const first = expectData(await sendWithKey(), 201);
    const replay = await sendWithKey();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(expectData(replay, 201).id).toBe(first.id);
    const created = (await eventsOf(owner.organizationId)).filter((event) => event.action === 'case.created');
    expect(created.map((event) => event.caseId)).toEqual([first.id]);
    // A new key is a new request: its own case, its own event.
    expectData(await send(), 201);
    expect((await eventsOf(owner.organizationId)).filter((event) => event.action === 'case.created')).toHaveLength(2);
    await expectIntactChain(owner.organizationId);
  });

  it('refuses UPDATE, DELETE and TRUNCATE of audit events, whoever asks', async () => {
    const owner = await createUser();
    expectData(await caseAs(owner, 'Kept'), 201);
    const [event] = await eventsOf(owner.organizationId);
    expect(event).toBeDefined();
    const byId = eq(auditEvents.id, event!.id);
    expect(await failureOf(db().update(auditEvents).set({ action: 'case.deleted' }).where(byId))).toMatch(
      /append-only: UPDATE refused/,
    );
    expect(await failureOf(db().delete(auditEvents).where(byId))).toMatch(/append-only: DELETE refused/);
    expect(await failureOf(db().execute(sql`truncate audit_events`))).toMatch(/append-only: TRUNCATE refused/);
    const [still] = await db().select().from(auditEvents).where(byId);
    expect(still).toEqual(event);
  });

  it('commits no change without its event: when the event cannot be written, the change rolls back', async () => {
    const owner = await createUser();
    const before = await eventsOf(owner.organizationId);
    // A second trigger stands in for any failure of the audit write (disk, constraint, lock timeout).
    await db().execute(sql`create function audit_events_fail() returns trigger language plpgsql as $$
      begin raise exception 'audit write failed'; end $$`);
    await db().execute(
      sql`create trigger audit_events_fail before insert on audit_events for each row execute function audit_events_fail()`,
    );
    try {
      const result = await caseAs(owner, 'Never Saved');
      expect(result.status).toBe(500);
    } finally {
      await db().execute(sql`drop trigger audit_events_fail on audit_events`);
      await db().execute(sql`drop function audit_events_fail()`);
    }
    const saved = await db().select().from(cases).where(eq(cases.organizationId, owner.organizationId));
    expect(saved.filter((row) => row.name === 'Never Saved')).toEqual([]);
    expect(await eventsOf(owner.organizationId)).toEqual(before);
    // And the chain goes on where it was.
    expectData(await caseAs(owner, 'Saved'), 201);
    await expectIntactChain(owner.organizationId);
  });

  it('never forks the chain under 50 concurrent writes of one organization (one event each, 1…n, no gaps)', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    // 50 cases: a tier without a case cap.
    await putOnPlan(owner, 'tier5', { card: true });
    const start = await expectIntactChain(owner.organizationId);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => caseAs(i % 2 ? owner : admin, `Concurrent ${i}`, owner.organizationId)),
    );
    for (const result of results) expect(result.status).toBe(201);
    expect(await expectIntactChain(owner.organizationId)).toBe(start + 50);
  });

  it.runIf(onServer)(
    'keeps every chain intact when concurrent requests each write into several organizations (no deadlock)',
    async () => {
      // Members of two organizations each: their sign-ins chain into both, taking both heads in one order.
      const a = await createUser();
      const b = await createUser();
      const both = await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          const member = await addMember(i % 2 ? a.organizationId : b.organizationId, 'member');
          await db()
            .insert(organizationMembers)
            .values({ organizationId: i % 2 ? b.organizationId : a.organizationId, userId: member.id, role: 'member' });
          return member;
        }),
      );
      const results = await Promise.all(
        both.flatMap((member) =>
          Array.from({ length: 4 }, () =>
            invoke(routes.login, { body: { email: member.email, password: member.password } }),
          ),
        ),
      );
      for (const result of results) expect(result.status).toBe(200);
      await expectIntactChain(a.organizationId);
      await expectIntactChain(b.organizationId);
    },
  );
});
