import { randomBytes } from 'node:crypto';
import { asc, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import {
  type AuditAction,
  type AuditActor,
  eventHash,
  GENESIS_HASH,
  recordAudit,
  STAFF_ACTOR,
  SYSTEM_ACTOR,
  withAuditScope,
} from '../../lib/audit';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { auditEvents, caseAccess } from '../../lib/db/schema';
import { transaction } from '../../lib/db/transaction';
import { addMember, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke, type InvokeOptions } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';
import { UNKNOWN_ID } from '../harness/ids';

afterEach(() => testClock.reset());

const listEvents = (
  caller: { accessToken?: string },
  orgId: string,
  query: Record<string, string> = {},
  options: InvokeOptions = {},
) => invoke(routes.listAuditEvents, { token: caller.accessToken, path: { orgId }, query, ...options });

type Event = { id: string; sequence: number; action: string; actor: { userId: string | null }; caseId: string | null };
const actionsOf = (page: { data: Event[] | null }) => (page.data ?? []).map((e) => e.action);
const sequencesOf = (page: { data: Event[] | null }) => (page.data ?? []).map((e) => e.sequence);

/** Records events through the real chain writer, in one transaction, as `actor` (staff by default). */
async function record(
  organizationId: string,
  events: Array<{
    action: AuditAction;
    caseId?: string;
    target?: { type: string; id: string };
    metadata?: Record<string, unknown>;
  }>,
  actor: AuditActor = STAFF_ACTOR,
) {
  await withAuditScope({ actor, ip: null, userAgent: null, requestId: null }, () =>
    transaction(async (tx) => {
      for (const event of events) recordAudit(tx, { organizationId, ...event });
    }),
  );
}

const createCase = async (caller: TestUser, name = `Case ${randomBytes(3).toString('hex')}`) =>
  expectData(
    await invoke(routes.createCase, {
      token: caller.accessToken,
      organization: caller.organizationId,
      body: { name },
      ip: '198.51.100.23',
      headers: { 'user-agent': 'Firm App/3.0' },
    }),
    201,
  );

describe('GET /organization/{orgId}/audit-events', () => {
  it('answers each event with who, from where, what, and its place in the chain', async () => {
    // Prepare
    const owner = await createUser();
    const created = await createCase(owner, 'Doe v. Roe');
    // Act
    const page = expectData(await listEvents(owner, owner.organizationId, { caseId: created.id }));
    // Assess
    expect(page).toMatchObject({ total: 1, page: 1, perPage: 50, totalPages: 1, nextPage: null, previousPage: null });
    const [event] = page.data;
    const [row] = await db().select().from(auditEvents).where(eq(auditEvents.id, event.id));
    expect(event).toEqual({
      id: row!.id,
      sequence: row!.sequence,
      occurredAt: row!.occurredAt.toISOString(),
      action: 'case.created',
      actor: { type: 'user', userId: owner.id, tokenId: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      caseId: created.id,
      target: { type: 'case', id: created.id },
      ip: '198.51.100.23',
      userAgent: 'Firm App/3.0',
      requestId: expect.any(String),
      clientRequestId: null,
      metadata: { name: 'Doe v. Roe' },
      redacted: false,
      count: 1,
      prevHash: row!.prevHash,
      hash: eventHash(row!),
    });
    expect(event.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('shows staff and system events with no user, and events without a case or target as null', async () => {
    const owner = await createUser();
    await record(owner.organizationId, [{ action: 'billing.credits.granted', metadata: { amountCents: 500 } }]);
    await record(owner.organizationId, [{ action: 'billing.processor_event.received' }], SYSTEM_ACTOR);
    const page = expectData(await listEvents(owner, owner.organizationId, { action: 'billing.' }));
    expect(page.data).toEqual([
      expect.objectContaining({
        action: 'billing.processor_event.received',
        actor: { type: 'system', userId: null, tokenId: null },
        caseId: null,
        target: null,
        ip: null,
        userAgent: null,
        requestId: null,
        metadata: {},
      }),
      expect.objectContaining({
        action: 'billing.credits.granted',
        actor: { type: 'staff', userId: null, tokenId: null },
        metadata: { amountCents: 500 },
      }),
    ]);
  });

  it('answers newest first, 50 per page by default, each event chained to the one before it', async () => {
    // Prepare: 55 events of one kind on top of whatever registration recorded.
    const owner = await createUser();
    await record(
      owner.organizationId,
      Array.from({ length: 55 }, (_, i) => ({ action: 'organization.updated' as const, metadata: { i } })),
    );
    const all = await db()
      .select({ sequence: auditEvents.sequence, hash: auditEvents.hash })
      .from(auditEvents)
      .where(eq(auditEvents.organizationId, owner.organizationId))
      .orderBy(asc(auditEvents.sequence));
    // Act
    const first = expectData(await listEvents(owner, owner.organizationId));
    const second = expectData(await listEvents(owner, owner.organizationId, { page: '2' }));
    // Assess
    expect(first).toMatchObject({ total: all.length, page: 1, perPage: 50, nextPage: 2, previousPage: null });
    const newestFirst = all.map((e) => e.sequence).reverse();
    expect(sequencesOf(first)).toEqual(newestFirst.slice(0, 50));
    expect(sequencesOf(second)).toEqual(newestFirst.slice(50));
    expect(first.data[0].metadata).toEqual({ i: 54 });
    const hashOf = new Map(all.map((e) => [e.sequence, e.hash]));
    for (const event of first.data) expect(event.prevHash).toBe(hashOf.get(event.sequence - 1) ?? GENESIS_HASH);
  });

  it('pages with perPage/page and skip/limit, and sortOrder asc answers oldest first', async () => {
    const owner = await createUser();
    await record(
      owner.organizationId,
      Array.from({ length: 7 }, (_, i) => ({ action: 'organization.updated' as const, metadata: { i } })),
    );
    const only = { action: 'organization.updated' };
    const all = sequencesOf(expectData(await listEvents(owner, owner.organizationId, only)));
    expect(all).toHaveLength(7);
    expect(all).toEqual([...all].sort((a, b) => b - a));

    const third = expectData(await listEvents(owner, owner.organizationId, { ...only, perPage: '3', page: '3' }));
    expect(third).toMatchObject({ total: 7, page: 3, perPage: 3, totalPages: 3, nextPage: null, previousPage: 2 });
    expect(sequencesOf(third)).toEqual(all.slice(6));

    const window = expectData(await listEvents(owner, owner.organizationId, { ...only, skip: '2', limit: '4' }));
    expect(window).toMatchObject({ total: 7, skip: 2, limit: 4 });
    expect(sequencesOf(window)).toEqual(all.slice(2, 6));

    const oldest = expectData(await listEvents(owner, owner.organizationId, { ...only, sortOrder: 'asc', limit: '2' }));
    expect(sequencesOf(oldest)).toEqual([...all].reverse().slice(0, 2));
    expect(oldest.data.map((e: { metadata: unknown }) => e.metadata)).toEqual([{ i: 0 }, { i: 1 }]);
  });

  it('filters by action prefix, taking _ and % literally', async () => {
    const owner = await createUser();
    await record(owner.organizationId, [
      { action: 'organization.member.invited' },
      { action: 'organization.invitation.resent' },
      { action: 'organization.member.role_changed' },
      { action: 'user.password.changed' },
      { action: 'user.password_reset.requested' },
    ]);
    const byAction = async (action: string) =>
      actionsOf(expectData(await listEvents(owner, owner.organizationId, { action })));

    expect(await byAction('organization.member')).toEqual([
      'organization.member.role_changed',
      'organization.member.invited',
    ]);
    expect(await byAction('organization.member.invited')).toEqual(['organization.member.invited']);
    // `_` would match the `.` of user.password.changed as a LIKE wildcard.
    expect(await byAction('user.password_')).toEqual(['user.password_reset.requested']);
    expect(await byAction('user.password.')).toEqual(['user.password.changed']);
    expect(await byAction('organization.member.invited.')).toEqual([]);
    const none = expectData(await listEvents(owner, owner.organizationId, { action: 'nothing.like.this' }));
    expect(none).toMatchObject({ total: 0, totalPages: 0, data: [] });
  });

  it('filters by actor and by case', async () => {
    // Prepare: the owner and an admin each open a case; staff records an event in the admin's case.
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const adminAs = { ...admin, organizationId: owner.organizationId };
    const ownersCase = await createCase(owner);
    const adminsCase = await createCase(adminAs);
    expectData(
      await invoke(routes.updateCase, {
        token: admin.accessToken,
        organization: owner.organizationId,
        path: { caseId: adminsCase.id },
        body: { name: 'Renamed' },
      }),
    );
    await record(owner.organizationId, [{ action: 'evidence.emails.imported', caseId: adminsCase.id }]);
    // Act
    const byAdmin = expectData(await listEvents(owner, owner.organizationId, { actorId: admin.id, action: 'case.' }));
    const inAdminsCase = expectData(await listEvents(owner, owner.organizationId, { caseId: adminsCase.id }));
    const inOwnersCase = expectData(await listEvents(admin, owner.organizationId, { caseId: ownersCase.id }));
    const both = expectData(
      await listEvents(owner, owner.organizationId, { caseId: adminsCase.id, actorId: admin.id.toUpperCase() }),
    );
    // Assess
    expect(actionsOf(byAdmin)).toEqual(['case.updated', 'case.created']);
    expect(byAdmin.data.every((e: Event) => e.actor.userId === admin.id)).toBe(true);
    expect(actionsOf(inAdminsCase)).toEqual(['evidence.emails.imported', 'case.updated', 'case.created']);
    expect(actionsOf(inOwnersCase)).toEqual(['case.created']);
    expect(actionsOf(both)).toEqual(['case.updated', 'case.created']);
    // Ids that name no one match nothing (never 400, like every id a client sends).
    expect(expectData(await listEvents(owner, owner.organizationId, { actorId: 'not-a-uuid' })).total).toBe(0);
    expect(expectData(await listEvents(owner, owner.organizationId, { caseId: UNKNOWN_ID })).total).toBe(0);
  });

  it('filters by occurredAt, from and to both inclusive', async () => {
    // Prepare: three events a minute apart, after everything registration recorded.
    const owner = await createUser();
    const t0 = new Date(Date.now() + 86_400_000);
    const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000).toISOString();
    testClock.freeze(t0);
    await record(owner.organizationId, [{ action: 'organization.updated', metadata: { at: 0 } }]);
    testClock.advance(60);
    await record(owner.organizationId, [{ action: 'organization.updated', metadata: { at: 1 } }]);
    testClock.advance(60);
    await record(owner.organizationId, [{ action: 'organization.updated', metadata: { at: 2 } }]);
    testClock.reset();
    const metadataAt = async (query: Record<string, string>) =>
      expectData(await listEvents(owner, owner.organizationId, query)).data.map(
        (e: { metadata: { at?: number } }) => e.metadata.at,
      );
    // Act / Assess
    expect(await metadataAt({ from: at(1), to: at(1) })).toEqual([1]);
    expect(await metadataAt({ from: at(1) })).toEqual([2, 1]);
    expect(await metadataAt({ from: at(0), to: at(2) })).toEqual([2, 1, 0]);
    expect(await metadataAt({ action: 'organization.updated', to: at(1) })).toEqual([1, 0]);
    expect(await metadataAt({ from: new Date(t0.getTime() + 1).toISOString(), to: at(2) })).toEqual([2, 1]);
    expect(await metadataAt({ from: at(3) })).toEqual([]);
  });

  it("never shows another organization's events, whatever the filters", async () => {
    const owner = await createUser();
    const other = await createUser();
    const othersCase = await createCase(other);
    await record(other.organizationId, [{ action: 'organization.member.invited' }]);
    const otherIds = new Set(
      (
        await db()
          .select({ id: auditEvents.id })
          .from(auditEvents)
          .where(eq(auditEvents.organizationId, other.organizationId))
      ).map((e) => e.id),
    );

    const mine = expectData(await listEvents(owner, owner.organizationId, { perPage: '100' }));
    expect(mine.data.length).toBeGreaterThan(0);
    expect(mine.data.filter((e: Event) => otherIds.has(e.id))).toEqual([]);
    expect(expectData(await listEvents(owner, owner.organizationId, { caseId: othersCase.id })).total).toBe(0);
    expect(expectData(await listEvents(owner, owner.organizationId, { actorId: other.id })).total).toBe(0);
    expect(
      expectData(await listEvents(owner, owner.organizationId, { action: 'organization.member.invited' })).total,
    ).toBe(0);
  });

  it('runs the same number of SQL queries whatever the page size', async () => {
    const owner = await createUser();
    await record(
      owner.organizationId,
      Array.from({ length: 12 }, () => ({ action: 'organization.updated' as const })),
    );
    const small = await countQueries(() => listEvents(owner, owner.organizationId, { perPage: '1' }));
    const large = await countQueries(() =>
      listEvents(owner, owner.organizationId, { perPage: '100', action: 'organization', from: '2000-01-01T00:00:00Z' }),
    );
    expect(expectData(small.result).data).toHaveLength(1);
    expect(expectData(large.result).data.length).toBeGreaterThanOrEqual(12);
    expect(large.queries).toBe(small.queries);
  });

  it.each([
    ['an action in capitals', { action: 'Organization.Member' }, ['query.action']],
    ['an action with a wildcard', { action: 'case.%' }, ['query.action']],
    ['an empty action', { action: '' }, ['query.action']],
    ['an action over 100 characters', { action: 'a'.repeat(101) }, ['query.action']],
    ['a from that is not a date-time', { from: 'yesterday' }, ['query.from']],
    ['a date without a time', { to: '2026-01-01' }, ['query.to']],
    ['a to in month 13', { to: '2026-13-01T00:00:00Z' }, ['query.to']],
    ['from after to', { from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, ['query.from']],
    ['an empty actorId', { actorId: '' }, ['query.actorId']],
    ['a caseId over 200 characters', { caseId: 'c'.repeat(201) }, ['query.caseId']],
    ['perPage over 100', { perPage: '101' }, ['query.perPage']],
    ['an unknown sortOrder', { sortOrder: 'newest' }, ['query.sortOrder']],
    ['two bad fields', { from: 'x', action: 'A' }, ['query.action', 'query.from']],
  ])('answers 400 VALIDATION_FAILED naming the field for %s', async (_label, query, fields) => {
    const owner = await createUser();
    expectError(await listEvents(owner, owner.organizationId, query), 400, 'VALIDATION_FAILED', fields);
  });
});

describe('GET /organization/{orgId}/audit-events: case-scoped events (issue 31)', () => {
  const grant = (caseId: string, userId: string, access: 'owner' | 'admin' | 'viewer' | 'opposing_counsel') =>
    db().insert(caseAccess).values({ caseId, userId, access });

  /** A case opened by the owner, with an import naming a file and a search of its evidence. */
  async function caseWithNamingEvents() {
    const owner = await createUser();
    const created = await createCase(owner, 'Doe v. Roe');
    await record(
      owner.organizationId,
      [
        {
          action: 'evidence.import.created',
          caseId: created.id,
          target: { type: 'evidence_import', id: 'cases/doe-v-roe/settlement-draft.mbox' },
          metadata: { fileName: 'settlement-draft.mbox' },
        },
        {
          action: 'evidence.network_messages.searched',
          caseId: created.id,
          metadata: { path: { caseId: created.id }, query: { searchText: 'hidden assets' } },
        },
      ],
      { type: 'user', userId: owner.id, tokenId: null },
    );
    return { owner, caseId: created.id };
  }

  const NAMING = ['Doe v. Roe', 'settlement-draft', 'hidden assets', '198.51.100.23', 'Firm App/3.0'];

  it('shows an org admin without access to the case that its events happened, by whom and when, nothing they name', async () => {
    // Prepare
    const { owner, caseId } = await caseWithNamingEvents();
    const admin = await addMember(owner.organizationId, 'admin');
    // Act
    const page = expectData(await listEvents(admin, owner.organizationId, { caseId }));
    // Assess
    expect(actionsOf(page)).toEqual(['evidence.network_messages.searched', 'evidence.import.created', 'case.created']);
    for (const event of page.data)
      expect(event).toMatchObject({
        caseId,
        actor: { type: 'user', userId: owner.id },
        occurredAt: expect.any(String),
        target: null,
        ip: null,
        userAgent: null,
        metadata: null,
        redacted: true,
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
    for (const text of NAMING) expect(JSON.stringify(page.data)).not.toContain(text);
  });

  it('shows the same events in full to the case owner and to an org admin with viewer access', async () => {
    const { owner, caseId } = await caseWithNamingEvents();
    const admin = await addMember(owner.organizationId, 'admin');
    await grant(caseId, admin.id, 'viewer');
    for (const caller of [owner, admin]) {
      const page = expectData(await listEvents(caller, owner.organizationId, { caseId }));
      expect(page.data.map((e: { redacted: boolean }) => e.redacted)).toEqual([false, false, false]);
      expect(page.data[1]).toMatchObject({
        target: { type: 'evidence_import', id: 'cases/doe-v-roe/settlement-draft.mbox' },
        metadata: { fileName: 'settlement-draft.mbox' },
      });
      expect(page.data[2]).toMatchObject({ metadata: { name: 'Doe v. Roe' }, ip: '198.51.100.23' });
    }
  });

  it("withholds a case's event details from an org admin who is opposing counsel on it", async () => {
    const { owner, caseId } = await caseWithNamingEvents();
    const admin = await addMember(owner.organizationId, 'admin');
    await grant(caseId, admin.id, 'opposing_counsel');
    const page = expectData(await listEvents(admin, owner.organizationId, { caseId }));
    expect(page.data.map((e: { redacted: boolean }) => e.redacted)).toEqual([true, true, true]);
    for (const text of NAMING) expect(JSON.stringify(page.data)).not.toContain(text);
  });

  it('leaves events outside any case whole for every reader of the trail', async () => {
    const { owner } = await caseWithNamingEvents();
    const admin = await addMember(owner.organizationId, 'admin');
    await record(owner.organizationId, [{ action: 'organization.updated', metadata: { name: 'New firm name' } }]);
    const page = expectData(await listEvents(admin, owner.organizationId, { action: 'organization.updated' }));
    expect(page.data).toEqual([expect.objectContaining({ metadata: { name: 'New firm name' }, redacted: false })]);
  });
});

describeSecurity(routes.listAuditEvents, { request: ({ organizationId }) => ({ path: { orgId: organizationId } }) });

describe('GET /organization/{orgId}/audit-events security', () => {
  it.each([['member'], ['billing'], ['employee'], ['client']] as const)(
    'answers 403 INSUFFICIENT_ROLE to a %s of the organization',
    async (role) => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, role);
      const result = await listEvents(member, owner.organizationId);
      expectError(result, 403, 'INSUFFICIENT_ROLE');
      expect(result.body.data).toBeUndefined();
    },
  );

  it('answers to an admin of the organization', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const created = await createCase(owner);
    const page = expectData(await listEvents(admin, owner.organizationId, { caseId: created.id }));
    expect(actionsOf(page)).toEqual(['case.created']);
  });

  it("answers 403 NOT_A_MEMBER to another organization's admin and owner, showing no event", async () => {
    const owner = await createUser();
    await createCase(owner, 'Secret matter');
    const stranger = await createUser();
    const strangersAdmin = await addMember(stranger.organizationId, 'admin');
    for (const caller of [stranger, strangersAdmin]) {
      const result = await listEvents(caller, owner.organizationId);
      expectError(result, 403, 'NOT_A_MEMBER');
      expect(JSON.stringify(result.body)).not.toContain('Secret matter');
      // Naming their own organization in the header does not help.
      expectError(
        await listEvents(caller, owner.organizationId, {}, { organization: stranger.organizationId }),
        403,
        'NOT_A_MEMBER',
      );
    }
    expectError(await listEvents(stranger, UNKNOWN_ID), 403, 'NOT_A_MEMBER');
  });

  it('answers an automation token with audit:read, and refuses one without it', async () => {
    const owner = await createUser();
    const reader = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['audit:read'] } }),
    );
    const other = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['organization:read'] } }),
    );
    expect(expectData(await listEvents({ accessToken: reader.token }, owner.organizationId)).total).toBeGreaterThan(0);
    expectError(await listEvents({ accessToken: other.token }, owner.organizationId), 403, 'INSUFFICIENT_SCOPE');
  });
});
