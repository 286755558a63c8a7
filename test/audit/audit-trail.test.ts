import { randomBytes } from 'node:crypto';
import { asc, eq, sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';
import { routes } from '../../functions/routes';
import { eventHash, GENESIS_HASH } from '../../lib/audit';
import { db } from '../../lib/db/client';
import { auditChainHeads, auditEvents, cases, organizationMembers } from '../../lib/db/schema';
import { addMember, createUser, type TestUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { putOnPlan } from '../billing/billing-helpers';

const onServer = inject('databaseTemplate').kind === 'postgres';

const eventsOf = (organizationId: string) =>
  db()
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.organizationId, organizationId))
    .orderBy(asc(auditEvents.sequence));

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

const caseAs = (caller: TestUser, name: string, organizationId = caller.organizationId) =>
  invoke(routes.createCase, {
    token: caller.accessToken,
    organization: organizationId,
    body: { name },
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
    const [event] = await db().select().from(auditEvents).where(eq(auditEvents.requestId, requestId));
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
      metadata: { name: 'Doe v. Roe' },
    });
    expect(event!.tokenId).toMatch(/^[0-9a-f-]{36}$/);
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
