import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { devices, organizationMembers, organizationPlans, organizations } from '../../lib/db/schema';
import { createCaseRow, createUser, type TestUser, uniqueEmail } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';

const GiB = 1024 ** 3;

const listMine = (caller: { accessToken?: string }) =>
  invoke(routes.listMyOrganizations, { token: caller.accessToken });

const join = (organizationId: string, user: TestUser, role: (typeof organizationMembers.$inferInsert)['role']) =>
  db().insert(organizationMembers).values({ organizationId, userId: user.id, role });

describe('GET /organization/user/organizations', () => {
  it('runs the same number of SQL queries whatever the number of organizations', async () => {
    const one = await createUser();
    const many = await createUser();
    for (const other of await Promise.all(Array.from({ length: 4 }, () => createUser())))
      await join(other.organizationId, many, 'member');
    const single = await countQueries(() => listMine(one));
    const five = await countQueries(() => listMine(many));
    expect(expectData(single.result).data).toHaveLength(1);
    expect(expectData(five.result).data).toHaveLength(5);
    expect(single.queries).toBeGreaterThan(0);
    expect(five.queries).toBe(single.queries);
  });

  it('lists every organization of the caller in one page, with permission, billing and the active plan', async () => {
    // Prepare: the caller owns one organization and is a billing member of another.
    const caller = await createUser({ organizationName: 'Mine First LLP' });
    const other = await createUser({ organizationName: 'Theirs Second LLP' });
    await join(other.organizationId, caller, 'billing');
    // Act
    const data = expectData(await listMine(caller));
    // Assess
    expect(data).toMatchObject({ total: 2, page: 1, perPage: 2, totalPages: 1, nextPage: null, previousPage: null });
    expect(data.data.map((entry: any) => [entry.organization.name, entry.permission.role])).toEqual([
      ['Mine First LLP', 'owner'],
      ['Theirs Second LLP', 'billing'],
    ]);
    for (const entry of data.data) {
      expect(entry.billing).toEqual({
        billingMode: 'free',
        onCaseBilling: false,
        tier: null,
        cadence: null,
        hasPaymentMethod: false,
        delinquent: false,
      });
      const [plan] = await db()
        .select()
        .from(organizationPlans)
        .where(eq(organizationPlans.organizationId, entry.organization.id));
      expect(entry.organization.activePlan).toEqual({
        id: plan!.id,
        subscription: null,
        relatedSubscription: null,
        organization: null,
        payments: null,
        type: 'free',
        isFreePlan: true,
        isActive: true,
        isBetweenPlanChanges: false,
        seats: 5,
        seatsUsed: entry.organization.name === 'Mine First LLP' ? 1 : 2,
        remainingSeats: entry.organization.name === 'Mine First LLP' ? 4 : 3,
        devices: 2,
        deviceUsed: 0,
        remainingDevices: 2,
        storage: 5 * GiB,
        storageUsed: 0,
        remainingStorage: 5 * GiB,
        storageInKb: 5 * 1024 * 1024,
        storageUsedInKb: 0,
        storageInMb: 5120,
        storageUsedInMb: 0,
        storageInGb: 5,
        storageUsedInGb: 0,
        storageInTb: 0,
        storageUsedInTb: 0,
        createdAt: plan!.createdAt.toISOString(),
        updatedAt: plan!.updatedAt.toISOString(),
      });
    }
  });

  it('fills the active plan with what each organization uses', async () => {
    const caller = await createUser();
    expectData(
      await invoke(routes.inviteUsers, {
        token: caller.accessToken,
        path: { orgId: caller.organizationId },
        body: { emails: [uniqueEmail(), uniqueEmail()] },
      }),
      201,
    );
    await db().insert(devices).values({ organizationId: caller.organizationId, deviceId: 'dev-1', deviceType: 'ios' });
    await createCaseRow(caller.organizationId, { storageBytes: GiB });
    const [entry] = expectData(await listMine(caller)).data;
    expect(entry.organization.activePlan).toMatchObject({
      seatsUsed: 3,
      remainingSeats: 2,
      deviceUsed: 1,
      remainingDevices: 1,
      storageUsed: GiB,
      storageUsedInGb: 1,
      remainingStorage: 4 * GiB,
    });
  });

  it('never lists an organization the caller is not in', async () => {
    const caller = await createUser();
    const stranger = await createUser({ organizationName: 'Not Yours Inc' });
    const data = expectData(await listMine(caller));
    expect(data.total).toBe(1);
    expect(data.data.map((entry: any) => entry.organization.id)).toEqual([caller.organizationId]);
    expect(JSON.stringify(data)).not.toContain(stranger.organizationId);
    expect(JSON.stringify(data)).not.toContain('Not Yours Inc');
  });

  it('drops an organization once the caller is removed from it', async () => {
    const caller = await createUser();
    const other = await createUser();
    await join(other.organizationId, caller, 'member');
    expect(expectData(await listMine(caller)).total).toBe(2);
    expectData(
      await invoke(routes.removeOrganizationUser, {
        token: other.accessToken,
        path: { orgId: other.organizationId, userId: caller.id },
      }),
    );
    const data = expectData(await listMine(caller));
    expect(data.data.map((entry: any) => entry.organization.id)).toEqual([caller.organizationId]);
  });

  it('shows an inactive plan and a legacy organization (billing null)', async () => {
    const caller = await createUser();
    await db()
      .update(organizationPlans)
      .set({ isActive: false })
      .where(eq(organizationPlans.organizationId, caller.organizationId));
    await db().update(organizations).set({ billingMode: 'legacy' }).where(eq(organizations.id, caller.organizationId));
    const [entry] = expectData(await listMine(caller)).data;
    expect(entry.billing).toBeNull();
    expect(entry.organization.activePlan).toMatchObject({ isActive: false });
  });

  it('answers an empty page for a caller without organizations', async () => {
    const caller = await createUser();
    await db()
      .delete(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, caller.organizationId), eq(organizationMembers.userId, caller.id)),
      );
    const data = expectData(await listMine(caller));
    expect(data).toMatchObject({ total: 0, nextPage: null, previousPage: null });
    expect(data.data).toEqual([]);
  });
});

describeSecurity(routes.listMyOrganizations, { request: () => ({}) });

describe('GET /organization/user/organizations security', () => {
  it('lists for an automation token with organization:read', async () => {
    const caller = await createUser();
    const reader = expectData(
      await invoke(routes.generateToken, { token: caller.accessToken, body: { scopes: ['organization:read'] } }),
    );
    expect(expectData(await listMine({ accessToken: reader.token })).data[0].organization.id).toBe(
      caller.organizationId,
    );
  });
});
