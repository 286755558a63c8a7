import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { invitations } from '../../lib/db/schema';
import { createUser, signIn, type TestUser, tokenFromEmail, uniqueEmail, verifyEmailOf } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';

const INVITED = 'You are invited to join';
const DAY = 86_400;

const inviteOne = async (inviter: TestUser, email: string, role?: string) => {
  const body = role ? { emails: [email], role } : { emails: [email] };
  expectData(
    await invoke(routes.inviteUsers, { token: inviter.accessToken, path: { orgId: inviter.organizationId }, body }),
    201,
  );
  const [row] = await db()
    .select()
    .from(invitations)
    .where(and(eq(invitations.organizationId, inviter.organizationId), eq(invitations.email, email.toLowerCase())));
  return row!;
};

const listPending = (caller: { accessToken: string }, query: Record<string, string> = {}) =>
  invoke(routes.listPendingInvitations, { token: caller.accessToken, query });

const idsOf = (page: { data: Array<{ id: string }> | null }) => (page.data ?? []).map((i) => i.id);

describe('GET /organization/pending-invitations', () => {
  it("lists only the caller's own pending, unexpired invitations across organizations, newest update first", async () => {
    // Prepare: Ivy is invited by five organizations; one invitation expires, one is rejected, one accepted.
    let ivy = await createUser();
    await verifyEmailOf(ivy);
    const [expired, ...later] = await Promise.all(Array.from({ length: 5 }, () => createUser()));
    const expiredInvitation = await inviteOne(expired!, ivy.email);
    testClock.advance(20 * DAY);
    const [rejected, accepted, older, newer] = await Promise.all(later.map((user) => signIn(user)));
    const rejectedInvitation = await inviteOne(rejected!, ivy.email);
    expectData(
      await invoke(routes.rejectInvitation, {
        path: { orgId: rejected!.organizationId },
        body: { token: tokenFromEmail(ivy.email, INVITED), email: ivy.email },
      }),
    );
    await inviteOne(accepted!, ivy.email);
    expectData(
      await invoke(routes.acceptInvitation, {
        path: { orgId: accepted!.organizationId },
        body: { token: tokenFromEmail(ivy.email, INVITED), email: ivy.email },
      }),
      201,
    );
    const olderInvitation = await inviteOne(older!, ivy.email.toUpperCase(), 'client');
    testClock.advance(1);
    const newerInvitation = await inviteOne(newer!, ivy.email, 'admin');
    const someoneElse = await inviteOne(newer!, uniqueEmail('someone'));
    testClock.advance(15 * DAY);
    ivy = await signIn(ivy);
    // Act
    const page = expectData(await listPending(ivy));
    // Assess
    expect(page).toMatchObject({ total: 2, page: 1, perPage: 10, totalPages: 1, nextPage: null, previousPage: null });
    expect(idsOf(page)).toEqual([newerInvitation.id, olderInvitation.id]);
    expect(page.data[0]).toMatchObject({
      email: ivy.email,
      role: 'admin',
      status: 'pending',
      invitedBy: { id: newer!.id, name: newer!.name, email: newer!.email },
      invitedUser: { id: ivy.id, name: ivy.name, email: ivy.email },
      acceptedBy: null,
      organization: { id: newer!.organizationId },
    });
    expect(idsOf(page)).not.toContain(expiredInvitation.id);
    expect(idsOf(page)).not.toContain(rejectedInvitation.id);
    expect(idsOf(page)).not.toContain(someoneElse.id);
  });

  it('answers data null when the caller has no pending invitation', async () => {
    const loner = await createUser();
    await verifyEmailOf(loner);
    const other = await createUser();
    await inviteOne(other, uniqueEmail('not-loner'));
    const page = expectData(await listPending(loner));
    expect(page).toEqual({
      total: 0,
      page: 1,
      perPage: 10,
      totalPages: 0,
      nextPage: null,
      previousPage: null,
      data: null,
    });
  });

  it('filters by organization and userRole, sorts on request and pages', async () => {
    // Prepare
    const ivy = await createUser();
    await verifyEmailOf(ivy);
    const inviters = await Promise.all(Array.from({ length: 3 }, () => createUser()));
    const rows = [];
    for (const [index, inviter] of inviters.entries()) {
      rows.push(await inviteOne(inviter, ivy.email, index === 1 ? 'employee' : 'member'));
      testClock.advance(1);
    }
    // Act / Assess
    expect(idsOf(expectData(await listPending(ivy, { organization: inviters[0]!.organizationId })))).toEqual([
      rows[0]!.id,
    ]);
    expect(idsOf(expectData(await listPending(ivy, { userRole: 'employee' })))).toEqual([rows[1]!.id]);
    expect(expectData(await listPending(ivy, { userRole: 'owner' })).data).toBeNull();
    expect(expectData(await listPending(ivy, { organization: ivy.organizationId })).data).toBeNull();
    expect(idsOf(expectData(await listPending(ivy, { sortBy: 'createdAt', sortOrder: 'asc' })))).toEqual(
      rows.map((r) => r.id),
    );
    const second = expectData(await listPending(ivy, { page: '2', perPage: '2' }));
    expect(second).toMatchObject({ total: 3, page: 2, perPage: 2, totalPages: 2, nextPage: null, previousPage: 1 });
    expect(idsOf(second)).toEqual([rows[0]!.id]);
    const window = expectData(await listPending(ivy, { skip: '1', limit: '1' }));
    expect(window).toMatchObject({ total: 3, skip: 1, limit: 1 });
    expect(idsOf(window)).toEqual([rows[1]!.id]);
  });

  it('shows an account that has not verified its address none of the invitations to it (the squatter of an address learns nothing)', async () => {
    const squatter = await createUser();
    const inviter = await createUser();
    await inviteOne(inviter, squatter.email, 'admin');

    expect(expectData(await listPending(squatter))).toMatchObject({ data: null, total: 0 });

    await verifyEmailOf(squatter);
    expect(expectData(await listPending(squatter)).total).toBe(1);
  });

  it("does not show the caller other people's invitations to an organization they belong to", async () => {
    const owner = await createUser();
    await inviteOne(owner, uniqueEmail('guest'));
    expect(expectData(await listPending(owner)).data).toBeNull();
  });

  it('runs the same number of SQL queries whatever the page size', async () => {
    const ivy = await createUser();
    await verifyEmailOf(ivy);
    for (const inviter of await Promise.all(Array.from({ length: 3 }, () => createUser())))
      await inviteOne(inviter, ivy.email);
    const small = await countQueries(() => listPending(ivy, { perPage: '1' }));
    const large = await countQueries(() => listPending(ivy, { perPage: '50' }));
    expect(expectData(small.result).data).toHaveLength(1);
    expect(expectData(large.result).data).toHaveLength(3);
    expect(small.queries).toBeGreaterThan(0);
    expect(large.queries).toBe(small.queries);
  });

  it.each([
    [{ userRole: 'boss' }, 'query.userRole'],
    [{ sortBy: 'status' }, 'query.sortBy'],
    [{ sortOrder: 'sideways' }, 'query.sortOrder'],
    [{ organization: 'o'.repeat(201) }, 'query.organization'],
    [{ perPage: '1000' }, 'query.perPage'],
    [{ page: 'first' }, 'query.page'],
  ])('answers 400 VALIDATION_FAILED for %j', async (query, field) => {
    const user = await createUser();
    expectError(await listPending(user, query), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.listPendingInvitations, { request: () => ({}) });

describe('GET /organization/pending-invitations security', () => {
  it('lists for an automation token with organization:read', async () => {
    const ivy = await createUser();
    await verifyEmailOf(ivy);
    const inviter = await createUser();
    await inviteOne(inviter, ivy.email);
    const reader = expectData(
      await invoke(routes.generateToken, { token: ivy.accessToken, body: { scopes: ['organization:read'] } }),
    );
    expect(expectData(await listPending({ accessToken: reader.token })).total).toBe(1);
  });
});
