import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { invitations, organizationMembers, organizations } from '../../lib/db/schema';
import { createUser, type TestUser, tokenFromEmail, uniqueEmail, verifyEmailOf } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';

const INVITED = 'You are invited to join';

const inviteOne = async (inviter: TestUser, orgId: string, email: string, role?: string) => {
  const body = role ? { emails: [email], role } : { emails: [email] };
  expectData(await invoke(routes.inviteUsers, { token: inviter.accessToken, path: { orgId }, body }), 201);
  const [row] = await db()
    .select()
    .from(invitations)
    .where(and(eq(invitations.organizationId, orgId), eq(invitations.email, email)));
  return row!;
};

const list = (caller: { accessToken: string; organizationId: string }, query: Record<string, string> = {}) =>
  invoke(routes.listInvitations, { token: caller.accessToken, organization: caller.organizationId, query });

const emailsOf = (page: { data: Array<{ email: string }> | null }) => (page.data ?? []).map((i) => i.email);

const person = (user: TestUser) => ({ id: user.id, name: user.name, email: user.email });

const organizationName = async (orgId: string) =>
  (await db().select({ name: organizations.name }).from(organizations).where(eq(organizations.id, orgId)))[0]!.name;

/**
 * Alice owns organization A and is a member of Bob's organization B; Carol's organization C is
 * not hers. A: a pending member invitation, an admin invitation, and Dave's accepted client
 * invitation. B: one pending invitation. C: one pending invitation.
 */
async function world() {
  const alice = await createUser({ organizationName: `Alpha ${Date.now()} LLP` });
  const bob = await createUser({ organizationName: `Bravo ${Date.now()} LLP` });
  const carol = await createUser({ organizationName: `Charlie ${Date.now()} LLP` });
  const dave = await createUser();
  await verifyEmailOf(dave);
  await db()
    .insert(organizationMembers)
    .values({ organizationId: bob.organizationId, userId: alice.id, role: 'member' });
  const aPending = await inviteOne(alice, alice.organizationId, uniqueEmail('apending'));
  const aAdmin = await inviteOne(alice, alice.organizationId, uniqueEmail('aadmin'), 'admin');
  const aAccepted = await inviteOne(alice, alice.organizationId, dave.email, 'client');
  const token = tokenFromEmail(dave.email, INVITED);
  expectData(
    await invoke(routes.acceptInvitation, {
      path: { orgId: alice.organizationId },
      body: { token, email: dave.email },
    }),
    201,
  );
  const bPending = await inviteOne(bob, bob.organizationId, uniqueEmail('bpending'));
  const cPending = await inviteOne(carol, carol.organizationId, uniqueEmail('cpending'));
  return { alice, bob, carol, dave, aPending, aAdmin, aAccepted, bPending, cPending };
}

describe('GET /organization/invitations', () => {
  it("returns a page of the invitations of all the caller's organizations with the related users and organization", async () => {
    // Prepare
    const w = await world();
    // Act
    const page = expectData(await list(w.alice));
    // Assess
    expect(page).toMatchObject({ total: 4, page: 1, perPage: 10, totalPages: 1, nextPage: null, previousPage: null });
    expect(emailsOf(page).sort()).toEqual(
      [w.aPending.email, w.aAdmin.email, w.aAccepted.email, w.bPending.email].sort(),
    );
    expect(emailsOf(page)).not.toContain(w.cPending.email);
    const byEmail = new Map(page.data.map((i: any) => [i.email, i]));
    expect(byEmail.get(w.dave.email)).toMatchObject({
      id: w.aAccepted.id,
      role: 'client',
      status: 'accepted',
      invitedBy: person(w.alice),
      invitedUser: person(w.dave),
      acceptedBy: person(w.dave),
      organization: { id: w.alice.organizationId, name: await organizationName(w.alice.organizationId) },
    });
    expect(byEmail.get(w.aPending.email)).toMatchObject({
      role: 'member',
      status: 'pending',
      expiresAt: w.aPending.expiresAt.toISOString(),
      invitedBy: person(w.alice),
      invitedUser: null,
      acceptedBy: null,
    });
    expect(byEmail.get(w.bPending.email)).toMatchObject({
      invitedBy: person(w.bob),
      organization: { id: w.bob.organizationId },
    });
  });

  it('never shows another organization the invitations of an organization its members do not share', async () => {
    const w = await world();
    const page = expectData(await list(w.carol));
    expect(emailsOf(page)).toEqual([w.cPending.email]);
    // Bob sees B only: Alice's membership in B does not open A to him.
    expect(emailsOf(expectData(await list(w.bob)))).toEqual([w.bPending.email]);
  });

  it('limits the list to one organization with `organization`, and answers 403 NOT_A_MEMBER for one the caller is not in', async () => {
    const w = await world();
    expect(emailsOf(expectData(await list(w.alice, { organization: w.bob.organizationId })))).toEqual([
      w.bPending.email,
    ]);
    expect(expectData(await list(w.alice, { organization: w.alice.organizationId })).total).toBe(3);
    expectError(await list(w.alice, { organization: w.carol.organizationId }), 403, 'NOT_A_MEMBER');
  });

  it('orders by most recently updated first, and by createdAt or email on request', async () => {
    // Prepare: three invitations a second apart, then the first one is re-sent.
    const owner = await createUser();
    const [c, a, b] = [uniqueEmail('c-first'), uniqueEmail('a-second'), uniqueEmail('b-third')];
    for (const email of [c, a, b]) {
      await inviteOne(owner, owner.organizationId, email);
      testClock.advance(1);
    }
    const first = await inviteOne(owner, owner.organizationId, c);
    expect(first.updatedAt.getTime()).toBeGreaterThan(first.createdAt.getTime());
    // Act / Assess
    expect(emailsOf(expectData(await list(owner)))).toEqual([c, b, a]);
    expect(emailsOf(expectData(await list(owner, { sortOrder: 'asc' })))).toEqual([a, b, c]);
    expect(emailsOf(expectData(await list(owner, { sortBy: 'createdAt' })))).toEqual([b, a, c]);
    expect(emailsOf(expectData(await list(owner, { sortBy: 'createdAt', sortOrder: 'asc' })))).toEqual([c, a, b]);
    expect(emailsOf(expectData(await list(owner, { sortBy: 'email', sortOrder: 'asc' })))).toEqual([a, b, c]);
    expect(emailsOf(expectData(await list(owner, { sortBy: 'email', sortOrder: 'desc' })))).toEqual([c, b, a]);
  });

  it.each([
    [
      'status=pending',
      { status: 'pending' },
      (w: Awaited<ReturnType<typeof world>>) => [w.aPending, w.aAdmin, w.bPending],
    ],
    ['status=accepted', { status: 'accepted' }, (w: Awaited<ReturnType<typeof world>>) => [w.aAccepted]],
    ['userRole=admin', { userRole: 'admin' }, (w: Awaited<ReturnType<typeof world>>) => [w.aAdmin]],
    ['userRole=member', { userRole: 'member' }, (w: Awaited<ReturnType<typeof world>>) => [w.aPending, w.bPending]],
    ['status and userRole', { status: 'pending', userRole: 'client' }, () => []],
  ])('filters by %s', async (_label, query, expected) => {
    const w = await world();
    const page = expectData(await list(w.alice, query));
    const emails = expected(w).map((i) => i.email);
    expect(emailsOf(page).sort()).toEqual(emails.sort());
    expect(page.total).toBe(emails.length);
  });

  it('lists rejected invitations under status=rejected', async () => {
    const owner = await createUser();
    const row = await inviteOne(owner, owner.organizationId, uniqueEmail('rejecting'));
    const token = tokenFromEmail(row.email, INVITED);
    expectData(
      await invoke(routes.rejectInvitation, {
        path: { orgId: owner.organizationId },
        body: { token, email: row.email },
      }),
    );
    expect(expectData(await list(owner, { status: 'rejected' })).data).toEqual([
      expect.objectContaining({ id: row.id, status: 'rejected' }),
    ]);
    expect(expectData(await list(owner, { status: 'pending' })).data).toBeNull();
  });

  it('searches the email and the organization name with searchText', async () => {
    const w = await world();
    const byEmail = expectData(await list(w.alice, { searchText: 'aadmin' }));
    expect(emailsOf(byEmail)).toEqual([w.aAdmin.email]);
    expect(byEmail.total).toBe(1);
    const byOrganization = expectData(await list(w.alice, { searchText: 'bravo' }));
    expect(emailsOf(byOrganization)).toEqual([w.bPending.email]);
    expect(byOrganization.total).toBe(1);
    // The search never reaches organizations the caller is not in.
    expect(expectData(await list(w.alice, { searchText: 'cpending' })).data).toBeNull();
  });

  it('answers data null (not []) with a zero total when nothing matches', async () => {
    const owner = await createUser();
    const page = expectData(await list(owner));
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

  it('pages with page/perPage and with skip/limit', async () => {
    // Prepare: five invitations a second apart.
    const owner = await createUser();
    const emails: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      emails.push((await inviteOne(owner, owner.organizationId, uniqueEmail(`page${i}`))).email);
      testClock.advance(1);
    }
    const newestFirst = [...emails].reverse();
    // Act / Assess
    const second = expectData(await list(owner, { page: '2', perPage: '3' }));
    expect(second).toMatchObject({ total: 4, page: 2, perPage: 3, totalPages: 2, nextPage: null, previousPage: 1 });
    expect(emailsOf(second)).toEqual(newestFirst.slice(3));
    const firstPage = expectData(await list(owner, { perPage: '3' }));
    expect(firstPage).toMatchObject({ page: 1, nextPage: 2, previousPage: null });
    expect(emailsOf(firstPage)).toEqual(newestFirst.slice(0, 3));
    const window = expectData(await list(owner, { skip: '1', limit: '2' }));
    expect(window).toMatchObject({ total: 4, skip: 1, limit: 2, nextPage: 2, previousPage: 1 });
    expect(emailsOf(window)).toEqual(newestFirst.slice(1, 3));
    // The window reaches the end of the list: no next page, though 2 is not the last page number.
    const tail = expectData(await list(owner, { skip: '2', limit: '3' }));
    expect(tail).toMatchObject({ total: 4, skip: 2, limit: 3, totalPages: 2, nextPage: null, previousPage: 1 });
    expect(emailsOf(tail)).toEqual(newestFirst.slice(2));
    const beyond = expectData(await list(owner, { page: '5', perPage: '3' }));
    expect(beyond).toMatchObject({ total: 4, data: [] });
  });

  it('runs the same number of SQL queries whatever the page size', async () => {
    const owner = await createUser();
    for (let i = 0; i < 4; i += 1) await inviteOne(owner, owner.organizationId, uniqueEmail('count'));
    const small = await countQueries(() => list(owner, { perPage: '1' }));
    const large = await countQueries(() => list(owner, { perPage: '50' }));
    const oneOrganization = await countQueries(() =>
      list(owner, { perPage: '50', organization: owner.organizationId }),
    );
    expect(expectData(small.result).data).toHaveLength(1);
    expect(expectData(large.result).data).toHaveLength(4);
    expect(expectData(oneOrganization.result).data).toHaveLength(4);
    expect(small.queries).toBeGreaterThan(0);
    expect(large.queries).toBe(small.queries);
    expect(oneOrganization.queries).toBe(small.queries + 1);
  });

  it.each([
    [undefined, 'The organization header is required'],
    ['o'.repeat(201), 'Must be an organization id of at most 200 characters'],
  ])('answers 400 naming headers.organization when the header is %s', async (header, message) => {
    const owner = await createUser();
    const result = await invoke(routes.listInvitations, { token: owner.accessToken, organization: header });
    expectError(result, 400, 'VALIDATION_FAILED', ['headers.organization']);
    expect(result.body.error.details).toContainEqual({ path: 'headers.organization', message });
  });

  it.each([
    [{ searchText: 'ab' }, 'query.searchText'],
    [{ searchText: '  ab  ' }, 'query.searchText'],
    [{ searchText: 's'.repeat(101) }, 'query.searchText'],
    [{ searchText: 'abc\u0000' }, 'query.searchText'],
    [{ status: 'deleted' }, 'query.status'],
    [{ userRole: 'boss' }, 'query.userRole'],
    [{ sortBy: 'name' }, 'query.sortBy'],
    [{ sortOrder: 'up' }, 'query.sortOrder'],
    [{ perPage: '101' }, 'query.perPage'],
    [{ perPage: 'ten' }, 'query.perPage'],
    [{ page: '0' }, 'query.page'],
    [{ limit: '0' }, 'query.limit'],
    [{ skip: '-1' }, 'query.skip'],
    [{ organization: 'o'.repeat(201) }, 'query.organization'],
  ])('answers 400 VALIDATION_FAILED for %j', async (query, field) => {
    const owner = await createUser();
    expectError(await list(owner, query), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.listInvitations, { request: () => ({}) });

describe('GET /organization/invitations security', () => {
  it('lists for an automation token with organization:read', async () => {
    const owner = await createUser();
    await inviteOne(owner, owner.organizationId, uniqueEmail('scoped'));
    const reader = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['organization:read'] } }),
    );
    expect(expectData(await list({ accessToken: reader.token, organizationId: owner.organizationId })).total).toBe(1);
  });
});
