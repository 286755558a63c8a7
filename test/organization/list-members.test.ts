import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { organizationMembers, organizationPlans } from '../../lib/db/schema';
import { addMember, createUser, type TestUser, uniqueEmail, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke, type InvokeOptions } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';
import { UNKNOWN_ID } from '../harness/ids';

type Role = (typeof organizationMembers.$inferInsert)['role'];

const listMembers = (
  caller: { accessToken?: string },
  orgId: string,
  query: Record<string, string> = {},
  options: InvokeOptions = {},
) => invoke(routes.listMembers, { token: caller.accessToken, path: { orgId }, organization: orgId, query, ...options });

const ids = (page: { data: Array<{ user: { id: string } }> | null }) => (page.data ?? []).map((m) => m.user.id);

/** The owner's membership date; members joined after it, one minute apart, so the order is certain. */
async function membershipStart(owner: TestUser): Promise<Date> {
  const [row] = await db()
    .select({ createdAt: organizationMembers.createdAt })
    .from(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, owner.organizationId), eq(organizationMembers.userId, owner.id)));
  return row!.createdAt;
}

/** A new user who joined `owner`'s organization `minutes` after the owner, with `role`. */
async function join(
  owner: TestUser,
  minutes: number,
  role: Role = 'member',
  overrides: { name?: string; email?: string } = {},
) {
  const user = await createUser(overrides);
  const start = await membershipStart(owner);
  await db()
    .insert(organizationMembers)
    .values({
      organizationId: owner.organizationId,
      userId: user.id,
      role,
      createdAt: new Date(start.getTime() + minutes * 60_000),
    });
  return user;
}

/** An owner with `count` members joined after them, in order; returns [owner, ...members]. */
async function organizationOf(count: number) {
  const owner = await createUser();
  const members: TestUser[] = [];
  for (let i = 1; i <= count; i += 1) members.push(await join(owner, i));
  return { owner, all: [owner, ...members] };
}

describe('GET /organization/{orgId}/members', () => {
  it('answers a Page object of 10 members by default, oldest membership first', async () => {
    // Prepare
    const { owner, all } = await organizationOf(11);
    // Act
    const first = expectData(await listMembers(owner, owner.organizationId));
    const second = expectData(await listMembers(owner, owner.organizationId, { page: '2' }));
    // Assess
    expect(first).toMatchObject({ total: 12, page: 1, perPage: 10, totalPages: 2, nextPage: 2, previousPage: null });
    expect(first).not.toHaveProperty('skip');
    expect(ids(first)).toEqual(all.slice(0, 10).map((u) => u.id));
    expect(second).toMatchObject({ total: 12, page: 2, perPage: 10, totalPages: 2, nextPage: null, previousPage: 1 });
    expect(ids(second)).toEqual(all.slice(10).map((u) => u.id));
  });

  it('answers member entries with the user, the role and the last activity', async () => {
    const owner = await createUser({ name: 'Olive Owner' });
    const member = await join(owner, 1, 'billing', { name: 'Bill Payer' });
    await updateUserRow(owner.id, { lastActiveAt: new Date('2026-03-04T05:06:07.000Z') });
    await updateUserRow(member.id, { lastActiveAt: null });
    const data = expectData(await listMembers(owner, owner.organizationId));
    expect(data.data).toEqual([
      {
        user: { id: owner.id, name: 'Olive Owner', email: owner.email },
        role: 'owner',
        lastActivityAt: '2026-03-04T05:06:07.000Z',
      },
      { user: { id: member.id, name: 'Bill Payer', email: member.email }, role: 'billing', lastActivityAt: null },
    ]);
  });

  it("moves a member's lastActivityAt when they sign in", async () => {
    const owner = await createUser();
    const member = await join(owner, 1);
    await updateUserRow(member.id, { lastActiveAt: new Date('2020-01-01T00:00:00.000Z') });
    const before = Date.now();
    expectData(await invoke(routes.login, { body: { email: member.email, password: member.password } }));
    const entry = expectData(await listMembers(owner, owner.organizationId)).data.find(
      (m: any) => m.user.id === member.id,
    );
    expect(Date.parse(entry.lastActivityAt)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('pages with perPage and page', async () => {
    const { owner, all } = await organizationOf(11);
    const data = expectData(await listMembers(owner, owner.organizationId, { perPage: '5', page: '3' }));
    expect(data).toMatchObject({ total: 12, page: 3, perPage: 5, totalPages: 3, nextPage: null, previousPage: 2 });
    expect(ids(data)).toEqual(all.slice(10, 12).map((u) => u.id));
  });

  it('pages with skip and limit, which win over page and perPage', async () => {
    const { owner, all } = await organizationOf(7);
    const data = expectData(
      await listMembers(owner, owner.organizationId, { skip: '2', limit: '4', page: '5', perPage: '1' }),
    );
    expect(data).toMatchObject({ total: 8, skip: 2, limit: 4, totalPages: 2 });
    expect(data).not.toHaveProperty('page');
    expect(data).not.toHaveProperty('perPage');
    expect(ids(data)).toEqual(all.slice(2, 6).map((u) => u.id));
  });

  it('answers nextPage and previousPage from the skip/limit window, which need not start on a page boundary', async () => {
    // Prepare: 6 members in all.
    const { owner, all } = await organizationOf(5);
    // Act: the last four, the two before them, and the first two.
    const last = expectData(await listMembers(owner, owner.organizationId, { skip: '2', limit: '4' }));
    const middle = expectData(await listMembers(owner, owner.organizationId, { skip: '3', limit: '2' }));
    const first = expectData(await listMembers(owner, owner.organizationId, { skip: '0', limit: '2' }));
    // Assess: nothing after the end of the list; records before a window that starts mid-page.
    expect(last).toEqual(
      expect.objectContaining({ total: 6, skip: 2, limit: 4, totalPages: 2, nextPage: null, previousPage: 1 }),
    );
    expect(ids(last)).toEqual(all.slice(2).map((u) => u.id));
    expect(middle).toEqual(
      expect.objectContaining({ total: 6, skip: 3, limit: 2, totalPages: 3, nextPage: 3, previousPage: 1 }),
    );
    expect(first).toEqual(expect.objectContaining({ total: 6, skip: 0, limit: 2, nextPage: 2, previousPage: null }));
  });

  it('reverses the order with sortOrder desc', async () => {
    const { owner, all } = await organizationOf(3);
    const data = expectData(await listMembers(owner, owner.organizationId, { sortOrder: 'desc', sortBy: 'createdAt' }));
    expect(ids(data)).toEqual(all.map((u) => u.id).reverse());
    const asc = expectData(await listMembers(owner, owner.organizationId, { sortOrder: 'asc' }));
    expect(ids(asc)).toEqual(all.map((u) => u.id));
  });

  it('searches names and emails, case-insensitively', async () => {
    // Prepare
    const owner = await createUser({ name: 'Olga Owner' });
    const byName = await join(owner, 1, 'member', { name: 'Marjorie Quill' });
    const byEmail = await join(owner, 2, 'member', { name: 'Someone Else', email: uniqueEmail('quillfeather') });
    await join(owner, 3, 'member', { name: 'Unrelated Person' });
    // Act / Assess
    const data = expectData(await listMembers(owner, owner.organizationId, { searchText: 'QUILL' }));
    expect(data.total).toBe(2);
    expect(ids(data)).toEqual([byName.id, byEmail.id]);
    expect(ids(expectData(await listMembers(owner, owner.organizationId, { searchText: '  marjorie ' })))).toEqual([
      byName.id,
    ]);
    expect(
      ids(expectData(await listMembers(owner, owner.organizationId, { searchText: byEmail.email.toUpperCase() }))),
    ).toEqual([byEmail.id]);
  });

  it('treats % and _ in searchText as text, not wildcards', async () => {
    const owner = await createUser({ name: 'Plain Owner' });
    const percent = await join(owner, 1, 'member', { name: '100% Paralegal' });
    await join(owner, 2, 'member', { name: 'Ordinary Name' });
    expect(ids(expectData(await listMembers(owner, owner.organizationId, { searchText: '%' })))).toEqual([percent.id]);
    const none = expectData(await listMembers(owner, owner.organizationId, { searchText: '_' }));
    expect(none).toMatchObject({ total: 0, data: null });
  });

  it('filters by role', async () => {
    const owner = await createUser();
    const admin = await join(owner, 1, 'admin');
    await join(owner, 2, 'member');
    const secondAdmin = await join(owner, 3, 'admin');
    const data = expectData(await listMembers(owner, owner.organizationId, { role: 'admin' }));
    expect(data.total).toBe(2);
    expect(data.data.map((m: any) => [m.user.id, m.role])).toEqual([
      [admin.id, 'admin'],
      [secondAdmin.id, 'admin'],
    ]);
    expect(ids(expectData(await listMembers(owner, owner.organizationId, { role: 'owner' })))).toEqual([owner.id]);
  });

  it('combines search, role and paging', async () => {
    const owner = await createUser();
    const wanted = await join(owner, 1, 'employee', { name: 'Zed Employee' });
    await join(owner, 2, 'member', { name: 'Zed Member' });
    const wanted2 = await join(owner, 3, 'employee', { name: 'Zed Another' });
    const data = expectData(
      await listMembers(owner, owner.organizationId, { searchText: 'zed', role: 'employee', perPage: '1', page: '2' }),
    );
    expect(data).toMatchObject({ total: 2, page: 2, perPage: 1, totalPages: 2, nextPage: null, previousPage: 1 });
    expect(ids(data)).toEqual([wanted2.id]);
    expect(
      ids(
        expectData(
          await listMembers(owner, owner.organizationId, { searchText: 'zed', role: 'employee', perPage: '1' }),
        ),
      ),
    ).toEqual([wanted.id]);
  });

  it('answers data null when nothing matches, and [] with the total for a page past the end', async () => {
    const owner = await createUser();
    await join(owner, 1, 'member');
    const none = expectData(await listMembers(owner, owner.organizationId, { searchText: 'nobody-has-this-text' }));
    expect(none).toEqual({
      total: 0,
      page: 1,
      perPage: 10,
      totalPages: 0,
      nextPage: null,
      previousPage: null,
      data: null,
    });
    expect(expectData(await listMembers(owner, owner.organizationId, { role: 'client' })).data).toBeNull();
    const past = expectData(await listMembers(owner, owner.organizationId, { page: '4' }));
    expect(past).toMatchObject({ total: 2, data: [], nextPage: null });
  });

  it('runs the same number of SQL queries whatever the page size', async () => {
    const { owner } = await organizationOf(5);
    const small = await countQueries(() => listMembers(owner, owner.organizationId, { perPage: '1' }));
    const large = await countQueries(() => listMembers(owner, owner.organizationId, { perPage: '50' }));
    expect(ids(expectData(small.result))).toHaveLength(1);
    expect(ids(expectData(large.result))).toHaveLength(6);
    expect(small.queries).toBeGreaterThan(0);
    expect(large.queries).toBe(small.queries);
  });

  it('lists only members of this organization', async () => {
    const owner = await createUser();
    const other = await createUser();
    await addMember(other.organizationId, 'member');
    const data = expectData(await listMembers(owner, owner.organizationId));
    expect(ids(data)).toEqual([owner.id]);
  });

  it.each([['client'], ['user'], ['billing']] as const)(
    'answers a %s (any role), also while the plan is inactive',
    async (role) => {
      const owner = await createUser();
      const member = await join(owner, 1, role);
      await db()
        .update(organizationPlans)
        .set({ isActive: false })
        .where(eq(organizationPlans.organizationId, owner.organizationId));
      expect(ids(expectData(await listMembers(member, owner.organizationId)))).toEqual([owner.id, member.id]);
    },
  );

  it.each([
    ['missing', undefined],
    ['over 200 characters', 'o'.repeat(201)],
  ])('answers 400 naming headers.organization when the header is %s', async (_label, header) => {
    const owner = await createUser();
    const result = await invoke(routes.listMembers, {
      token: owner.accessToken,
      path: { orgId: owner.organizationId },
      ...(header ? { organization: header } : {}),
    });
    expectError(result, 400, 'VALIDATION_FAILED', ['headers.organization']);
  });

  it.each([
    ['not an id', () => 'acme'],
    [
      'another organization of the caller',
      async (owner: TestUser) =>
        expectData(
          await invoke(routes.createOrganization, {
            token: owner.accessToken,
            body: { name: `Second ${randomUUID()}` },
          }),
          201,
        ).organization.id,
    ],
  ])('answers 403 FORBIDDEN when the header names another organization than the path: %s', async (_label, header) => {
    const owner = await createUser();
    const result = await listMembers(owner, owner.organizationId, {}, { organization: await header(owner) });
    expectError(result, 403, 'FORBIDDEN');
    expect(result.body.data).toBeUndefined();
  });

  it('answers when the header names the path organization in another letter case', async () => {
    const owner = await createUser();
    const data = expectData(
      await listMembers(owner, owner.organizationId, {}, { organization: owner.organizationId.toUpperCase() }),
    );
    expect(ids(data)).toEqual([owner.id]);
  });

  it.each([
    ['perPage 0', { perPage: '0' }, ['query.perPage']],
    ['perPage over 100', { perPage: '101' }, ['query.perPage']],
    ['page 0', { page: '0' }, ['query.page']],
    ['a page that is not a number', { page: 'two' }, ['query.page']],
    ['a negative skip', { skip: '-1' }, ['query.skip']],
    ['limit over 100', { limit: '500' }, ['query.limit']],
    ['an unknown sortOrder', { sortOrder: 'up' }, ['query.sortOrder']],
    ['an unsupported sortBy', { sortBy: 'name' }, ['query.sortBy']],
    ['an unknown role', { role: 'boss' }, ['query.role']],
    ['a blank searchText', { searchText: '   ' }, ['query.searchText']],
    ['a searchText over 100 characters', { searchText: 's'.repeat(101) }, ['query.searchText']],
    ['a searchText with a NUL character', { searchText: 'ab\u0000c' }, ['query.searchText']],
    ['two bad fields', { perPage: 'x', role: 'OWNER' }, ['query.perPage', 'query.role']],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, query, fields) => {
    const owner = await createUser();
    expectError(await listMembers(owner, owner.organizationId, query), 400, 'VALIDATION_FAILED', fields);
  });

  it('answers 403 NOT_A_MEMBER for a path orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(await listMembers(owner, 'not-a-uuid'), 403, 'NOT_A_MEMBER');
  });
});

describeSecurity(routes.listMembers, { request: ({ organizationId }) => ({ path: { orgId: organizationId } }) });

describe('GET /organization/{orgId}/members security', () => {
  it('answers 403 NOT_A_MEMBER to a member of another organization, listing no one', async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const result = await listMembers(stranger, owner.organizationId);
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
    expect(JSON.stringify(result.body)).not.toContain(owner.email);
    // Naming their own organization in the header does not help.
    expectError(
      await listMembers(stranger, owner.organizationId, {}, { organization: stranger.organizationId }),
      403,
      'NOT_A_MEMBER',
    );
    expectError(await listMembers(stranger, UNKNOWN_ID), 403, 'NOT_A_MEMBER');
  });

  it('lists for an automation token with organization:read', async () => {
    const owner = await createUser();
    const reader = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['organization:read'] } }),
    );
    expect(ids(expectData(await listMembers({ accessToken: reader.token }, owner.organizationId)))).toEqual([owner.id]);
  });
});
