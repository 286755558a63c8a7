import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { putOnPlan } from '../harness/billing';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { eventHash, GENESIS_HASH, recordAudit, verifyAuditChain } from '../../lib/audit';
import { db } from '../../lib/db/client';
import { auditChainHeads, auditEvents } from '../../lib/db/schema';
import { transaction } from '../../lib/db/transaction';
import { addMember, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { auditChainOf, forgeAuditRows } from '../harness/audit';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';
import { UNKNOWN_ID } from '../harness/ids';

const verify = (caller: { accessToken?: string }, orgId: string) =>
  invoke(routes.verifyAuditChain, { token: caller.accessToken, path: { orgId } });

const eventsOf = (organizationId: string) => auditChainOf(organizationId);

/** An owner whose organization's chain holds events of real routes: two cases opened, one renamed, one access granted. */
async function organizationWithHistory(): Promise<TestUser> {
  const owner = await createUser();
  const as = { token: owner.accessToken, organization: owner.organizationId };
  const member = await addMember(owner.organizationId, 'member');
  const first = expectData(await invoke(routes.createCase, { ...as, body: { name: 'Doe v. Roe' } }), 201);
  expectData(await invoke(routes.createCase, { ...as, body: { name: 'Roe v. Doe' } }), 201);
  expectData(await invoke(routes.updateCase, { ...as, path: { caseId: first.id }, body: { name: 'Doe v. Roe (2)' } }));
  expectData(
    await invoke(routes.grantCaseAccess, {
      ...as,
      path: { caseId: first.id, userId: member.id },
      body: { access: 'viewer' },
    }),
  );
  return owner;
}

const atSequence = (organizationId: string, sequence: number) =>
  sql`${auditEvents.organizationId} = ${organizationId} and ${auditEvents.sequence} = ${sequence}`;

describe('GET /organization/{orgId}/audit-events/verify', () => {
  it('answers valid for a chain written by real routes, with its head', async () => {
    // Prepare
    const owner = await organizationWithHistory();
    const events = await eventsOf(owner.organizationId);
    expect(events.map((e) => e.action)).toEqual(
      expect.arrayContaining(['case.created', 'case.updated', 'case.access.granted']),
    );
    // Act
    const answer = expectData(await verify(owner, owner.organizationId));
    // Assess
    expect(answer).toEqual({
      valid: true,
      checkedEvents: events.length,
      headSequence: events.length,
      headHash: events.at(-1)!.hash,
      firstInvalidSequence: null,
      // The first call has no checkpoint: it verifies from the first event, and leaves one at the head.
      checkpoint: null,
      verifiedThroughSequence: events.length,
      complete: true,
      lastFullVerification: null,
      runningFullVerification: null,
    });
  });

  it('reads the chain in batches by sequence and answers the same whatever the batch size', async () => {
    const owner = await organizationWithHistory();
    const whole = await verifyAuditChain(owner.organizationId);
    for (const batchSize of [1, 2, 3, whole.checkedEvents]) {
      expect(await verifyAuditChain(owner.organizationId, { batchSize })).toEqual(whole);
    }
    expect(whole.valid).toBe(true);
    // One query per batch, the last one short or empty: an empty chain reads one batch, n events read n/2 + 1.
    const batched = await countQueries(() => verifyAuditChain(owner.organizationId, { batchSize: 2 }));
    const empty = await countQueries(() => verifyAuditChain(UNKNOWN_ID));
    expect(batched.queries - empty.queries).toBe(Math.floor(whole.checkedEvents / 2));
  });

  it.each([
    ['its metadata', { metadata: { name: 'Forged v. Roe' } }],
    ['its action', { action: 'case.deleted' }],
    ['its actor', { actorUserId: UNKNOWN_ID }],
    ['its time', { occurredAt: new Date('2020-01-01T00:00:00.000Z') }],
  ] as const)('answers valid:false at the sequence of a row whose %s was changed', async (_label, change) => {
    // Prepare: the case.updated event rewritten behind the trigger's back.
    const owner = await organizationWithHistory();
    const events = await eventsOf(owner.organizationId);
    const forged = events.find((e) => e.action === 'case.updated')!;
    await forgeAuditRows(() => db().update(auditEvents).set(change).where(eq(auditEvents.id, forged.id)));
    // Act
    const answer = expectData(await verify(owner, owner.organizationId));
    // Assess
    expect(answer).toMatchObject({
      valid: false,
      checkedEvents: forged.sequence,
      headSequence: events.length,
      headHash: events.at(-1)!.hash,
      firstInvalidSequence: forged.sequence,
    });
  });

  it('finds a forged row whose hash was recomputed by the next event, or by the head when it was the last', async () => {
    const owner = await organizationWithHistory();
    const events = await eventsOf(owner.organizationId);
    const rehash = (event: (typeof events)[number]) => {
      const changed = { ...event, metadata: { forged: true } };
      return db()
        .update(auditEvents)
        .set({ metadata: changed.metadata, hash: eventHash(changed) })
        .where(eq(auditEvents.id, event.id));
    };
    const middle = events[events.length - 3]!;
    await forgeAuditRows(() => rehash(middle));
    expect(await verifyAuditChain(owner.organizationId)).toMatchObject({
      valid: false,
      firstInvalidSequence: middle.sequence + 1,
    });

    const other = await organizationWithHistory();
    const otherEvents = await eventsOf(other.organizationId);
    await forgeAuditRows(() => rehash(otherEvents.at(-1)!));
    expect(await verifyAuditChain(other.organizationId)).toMatchObject({
      valid: false,
      checkedEvents: otherEvents.length,
      firstInvalidSequence: otherEvents.length,
    });
  });

  it.each([1, 2])('answers valid:false at the first sequence of a removed tail of %i event(s)', async (removed) => {
    const owner = await organizationWithHistory();
    const events = await eventsOf(owner.organizationId);
    const firstRemoved = events.length - removed + 1;
    await forgeAuditRows(() =>
      db()
        .delete(auditEvents)
        .where(
          sql`${auditEvents.organizationId} = ${owner.organizationId} and ${auditEvents.sequence} >= ${firstRemoved}`,
        ),
    );

    expect(expectData(await verify(owner, owner.organizationId))).toMatchObject({
      valid: false,
      checkedEvents: firstRemoved - 1,
      headSequence: events.length,
      headHash: events.at(-1)!.hash,
      firstInvalidSequence: firstRemoved,
    });
  });

  it('answers valid:false at the sequence of a deleted event inside the chain', async () => {
    const owner = await organizationWithHistory();
    const events = await eventsOf(owner.organizationId);
    const removed = events.length - 2;
    await forgeAuditRows(() => db().delete(auditEvents).where(atSequence(owner.organizationId, removed)));

    expect(await verifyAuditChain(owner.organizationId, { batchSize: 2 })).toMatchObject({
      valid: false,
      checkedEvents: removed,
      firstInvalidSequence: removed,
    });
  });

  it('answers valid:false at a broken link: a prevHash that is not the previous hash', async () => {
    const owner = await organizationWithHistory();
    const events = await eventsOf(owner.organizationId);
    const target = events[2]!;
    // Even with its own hash made to match, the link to the event before it is broken.
    const relinked = { ...target, prevHash: events[0]!.hash };
    await forgeAuditRows(() =>
      db()
        .update(auditEvents)
        .set({ prevHash: relinked.prevHash, hash: eventHash(relinked) })
        .where(eq(auditEvents.id, target.id)),
    );

    expect(await verifyAuditChain(owner.organizationId)).toMatchObject({
      valid: false,
      firstInvalidSequence: target.sequence,
    });
  });

  it('answers valid:false when a renumbered event leaves a gap in the sequence', async () => {
    const owner = await organizationWithHistory();
    const events = await eventsOf(owner.organizationId);
    await forgeAuditRows(() =>
      db()
        .update(auditEvents)
        .set({ sequence: events.length + 5 })
        .where(atSequence(owner.organizationId, events.length - 1)),
    );
    expect(await verifyAuditChain(owner.organizationId)).toMatchObject({
      valid: false,
      firstInvalidSequence: events.length - 1,
    });
  });

  it('compares the last event with the head: a head set back or moved on is invalid', async () => {
    const owner = await organizationWithHistory();
    const events = await eventsOf(owner.organizationId);
    const setHead = (values: { sequence: number; hash: string }) =>
      db().update(auditChainHeads).set(values).where(eq(auditChainHeads.organizationId, owner.organizationId));

    await setHead({ sequence: events.length - 1, hash: events.at(-2)!.hash });
    expect(await verifyAuditChain(owner.organizationId)).toMatchObject({
      valid: false,
      headSequence: events.length - 1,
      firstInvalidSequence: events.length,
    });
    await setHead({ sequence: events.length, hash: GENESIS_HASH });
    expect(await verifyAuditChain(owner.organizationId)).toMatchObject({
      valid: false,
      firstInvalidSequence: events.length,
    });
    await setHead({ sequence: events.length, hash: events.at(-1)!.hash });
    expect(await verifyAuditChain(owner.organizationId)).toMatchObject({ valid: true });
  });

  it("is not affected by another organization's forged chain", async () => {
    const owner = await organizationWithHistory();
    const other = await organizationWithHistory();
    await forgeAuditRows(() => db().delete(auditEvents).where(atSequence(other.organizationId, 1)));
    expect(expectData(await verify(owner, owner.organizationId)).valid).toBe(true);
    expect(expectData(await verify(other, other.organizationId))).toMatchObject({
      valid: false,
      checkedEvents: 1,
      firstInvalidSequence: 1,
    });
  });

  it('answers valid with no events: sequence 0 and the genesis hash, which the first event chains from', async () => {
    const none = { valid: true, checkedEvents: 0, headSequence: 0, headHash: GENESIS_HASH, firstInvalidSequence: null };
    expect(await verifyAuditChain(UNKNOWN_ID)).toEqual(none);
    expect(await verifyAuditChain('not-a-uuid')).toEqual(none);
  });

  it('stays valid while events are appended during the check (one snapshot)', async () => {
    // Prepare: a chain long enough that reading it one event per query spans the appends below.
    const owner = await organizationWithHistory();
    await transaction(async (tx) => {
      for (let i = 0; i < 400; i += 1)
        recordAudit(tx, { action: 'organization.updated', organizationId: owner.organizationId });
    });
    const as = { token: owner.accessToken, organization: owner.organizationId };
    // Eight cases in all: more than the free plan's 3 a month, so a tier without a case cap.
    await putOnPlan(owner, 'tier5', { card: true });
    // Act
    const [answer, ...created] = await Promise.all([
      verifyAuditChain(owner.organizationId, { batchSize: 1 }),
      ...Array.from({ length: 6 }, (_, i) => invoke(routes.createCase, { ...as, body: { name: `Concurrent ${i}` } })),
    ]);
    for (const result of created) expectData(result, 201);
    // Assess: the chain as it stood when the check began, head included.
    expect(answer).toMatchObject({ valid: true, firstInvalidSequence: null });
    expect(answer.checkedEvents).toBe(answer.headSequence);
    const after = await verifyAuditChain(owner.organizationId);
    expect(after).toMatchObject({ valid: true, checkedEvents: (await eventsOf(owner.organizationId)).length });
  });
});

describeSecurity(routes.verifyAuditChain, { request: ({ organizationId }) => ({ path: { orgId: organizationId } }) });

describe('GET /organization/{orgId}/audit-events/verify security', () => {
  it('answers an admin of the organization', async () => {
    const owner = await organizationWithHistory();
    const admin = await addMember(owner.organizationId, 'admin');
    expect(expectData(await verify(admin, owner.organizationId)).valid).toBe(true);
  });

  it('answers 403 INSUFFICIENT_ROLE to a plain member', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const result = await verify(member, owner.organizationId);
    expectError(result, 403, 'INSUFFICIENT_ROLE');
    expect(result.body.data).toBeUndefined();
  });

  it("answers 403 NOT_A_MEMBER to another organization's admin", async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const strangersAdmin = await addMember(stranger.organizationId, 'admin');
    const result = await verify(strangersAdmin, owner.organizationId);
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(JSON.stringify(result.body)).not.toMatch(/headHash/);
  });

  it('answers an automation token with audit:read', async () => {
    const owner = await createUser();
    const reader = expectData(
      await invoke(routes.generateToken, {
        token: owner.accessToken,
        body: { scopes: ['audit:read'], label: `audit ${randomBytes(2).toString('hex')}` },
      }),
    );
    expect(expectData(await verify({ accessToken: reader.token }, owner.organizationId)).valid).toBe(true);
  });
});
