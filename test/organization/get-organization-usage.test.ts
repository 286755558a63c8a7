import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { addSeconds, now } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { devices, invitations, organizationPlans, organizations } from '../../lib/db/schema';
import { addMember, createCaseRow, createUser, type TestUser, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const TiB = 1024 ** 4;

const usage = (caller: { accessToken?: string }, orgId: string, query: Record<string, string> = {}) =>
  invoke(routes.getOrganizationUsage, { token: caller.accessToken, path: { orgId }, query });

const invite = async (owner: TestUser, emails: string[]) =>
  expectData(
    await invoke(routes.inviteUsers, {
      token: owner.accessToken,
      path: { orgId: owner.organizationId },
      body: { emails },
    }),
    201,
  );

const registerDevice = (organizationId: string, deviceId: string) =>
  db().insert(devices).values({ organizationId, deviceId, deviceType: 'android' });

describe('GET /organization/{orgId}/usages-stat', () => {
  it("reports a new organization's free plan: allowances, use, units and flags", async () => {
    // Prepare
    const owner = await createUser();
    // Act
    const data = expectData(await usage(owner, owner.organizationId));
    // Assess
    expect(data).toEqual({
      billingModel: 'free',
      planType: 'free',
      isPlanActive: true,
      isPlanPaid: true,
      seats: 5,
      seatsUsed: 1,
      remainingSeats: 4,
      devices: 2,
      devicesUsed: 0,
      remainingDevices: 2,
      storage: 5 * GiB,
      storageUsed: 0,
      remainingStorage: 5 * GiB,
      storageInKb: 5 * 1024 * 1024,
      storageUsedInKb: 0,
      storageInMb: 5 * 1024,
      storageUsedInMb: 0,
      storageInGb: 5,
      storageUsedInGb: 0,
      storageInTb: 0,
      storageUsedInTb: 0,
      canManageBilling: true,
      isNewDevice: null,
      enforcedPlan: { tier: null, basis: 'plan', includesPro: false, payBy: null },
    });
  });

  it('counts members plus pending, unexpired invitations as seats used', async () => {
    // Prepare: owner + 2 members + 2 pending invitations; an expired and a rejected one do not count.
    const owner = await createUser();
    await db()
      .update(organizationPlans)
      .set({ seats: 10 })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    await addMember(owner.organizationId, 'member');
    await addMember(owner.organizationId, 'client');
    const expired = uniqueEmail('expired');
    const rejected = uniqueEmail('rejected');
    await invite(owner, [uniqueEmail('pending'), uniqueEmail('pending'), expired, rejected]);
    await db()
      .update(invitations)
      .set({ expiresAt: addSeconds(now(), -60) })
      .where(eq(invitations.email, expired));
    await db().update(invitations).set({ status: 'rejected' }).where(eq(invitations.email, rejected));
    // Another organization's members do not count.
    const other = await createUser();
    await addMember(other.organizationId, 'member');
    // Act
    const data = expectData(await usage(owner, owner.organizationId));
    // Assess
    expect(data).toMatchObject({ seats: 10, seatsUsed: 5, remainingSeats: 5 });
  });

  it('never reports negative remaining seats when the plan is overbooked', async () => {
    const owner = await createUser();
    await db()
      .update(organizationPlans)
      .set({ seats: 1 })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    await addMember(owner.organizationId, 'member');
    expect(expectData(await usage(owner, owner.organizationId))).toMatchObject({
      seats: 1,
      seatsUsed: 2,
      remainingSeats: 0,
    });
  });

  it("counts the organization's registered devices", async () => {
    const owner = await createUser();
    const other = await createUser();
    await registerDevice(owner.organizationId, 'laptop-1');
    await registerDevice(other.organizationId, 'laptop-2');
    expect(expectData(await usage(owner, owner.organizationId))).toMatchObject({
      devices: 2,
      devicesUsed: 1,
      remainingDevices: 1,
    });
    await registerDevice(owner.organizationId, 'phone-1');
    expect(expectData(await usage(owner, owner.organizationId))).toMatchObject({ devicesUsed: 2, remainingDevices: 0 });
  });

  it('counts the storage of every case, archived and deleted ones included (kept until removed), in bytes and binary units', async () => {
    // Prepare
    const owner = await createUser();
    const other = await createUser();
    await createCaseRow(owner.organizationId, { storageBytes: 1.5 * GiB });
    await createCaseRow(owner.organizationId, { storageBytes: 512 * MiB, archivedAt: now() });
    // A soft-deleted case keeps its objects and rows (issue 29), so they still count.
    await createCaseRow(owner.organizationId, { storageBytes: 1 * GiB, deletedAt: now() });
    await createCaseRow(other.organizationId, { storageBytes: 1 * GiB });
    // Act
    const data = expectData(await usage(owner, owner.organizationId));
    // Assess
    expect(data).toMatchObject({
      storage: 5 * GiB,
      storageUsed: 3 * GiB,
      remainingStorage: 2 * GiB,
      storageUsedInKb: 3 * 1024 * 1024,
      storageUsedInMb: 3072,
      storageUsedInGb: 3,
      storageUsedInTb: 0,
    });
  });

  it('rounds the units to two decimals (1024-based)', async () => {
    const owner = await createUser();
    await db()
      .update(organizationPlans)
      .set({ storageBytes: 3 * TiB })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    await createCaseRow(owner.organizationId, { storageBytes: 1.25 * TiB });
    await createCaseRow(owner.organizationId, { storageBytes: 1000 });
    const data = expectData(await usage(owner, owner.organizationId));
    const used = 1.25 * TiB + 1000;
    expect(data).toMatchObject({
      storage: 3 * TiB,
      storageUsed: used,
      remainingStorage: 3 * TiB - used,
      storageInTb: 3,
      storageUsedInTb: 1.25,
      storageInGb: 3072,
      storageUsedInGb: 1280,
      storageUsedInMb: 1310720,
      storageUsedInKb: Math.round((used / 1024) * 100) / 100,
    });
    expect(data.storageUsedInKb).toBe(1342177280.98);
  });

  it('never reports negative remaining storage when over the allowance', async () => {
    const owner = await createUser();
    await createCaseRow(owner.organizationId, { storageBytes: 6 * GiB });
    expect(expectData(await usage(owner, owner.organizationId))).toMatchObject({
      storageUsed: 6 * GiB,
      remainingStorage: 0,
    });
  });

  it('answers isNewDevice true for an unknown deviceId and false for a registered one', async () => {
    // Prepare
    const owner = await createUser();
    const other = await createUser();
    await registerDevice(owner.organizationId, 'known-device');
    await registerDevice(other.organizationId, 'elsewhere-device');
    // Act / Assess
    expect(
      expectData(await usage(owner, owner.organizationId, { deviceId: 'known-device', deviceType: 'android' }))
        .isNewDevice,
    ).toBe(false);
    expect(expectData(await usage(owner, owner.organizationId, { deviceId: 'never-seen' })).isNewDevice).toBe(true);
    // A device registered by another organization is new here.
    expect(
      expectData(await usage(owner, owner.organizationId, { deviceId: 'elsewhere-device', deviceType: 'ios' }))
        .isNewDevice,
    ).toBe(true);
    expect(expectData(await usage(owner, owner.organizationId, { deviceType: 'ios' })).isNewDevice).toBeNull();
  });

  it.each([
    ['owner', true],
    ['admin', true],
    ['billing', true],
    ['full_access', false],
    ['employee', false],
    ['member', false],
    ['user', false],
    ['client', false],
  ] as const)('answers canManageBilling for a %s: %s', async (role, expected) => {
    const owner = await createUser();
    const caller = role === 'owner' ? owner : await addMember(owner.organizationId, role);
    expect(expectData(await usage(caller, owner.organizationId)).canManageBilling).toBe(expected);
  });

  it('reports an inactive plan (reading needs no active plan) and an unpaid base fee', async () => {
    const owner = await createUser();
    await db()
      .update(organizationPlans)
      .set({ isActive: false })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    await db()
      .update(organizations)
      .set({ billingMode: 'pay_as_you_go', billingTier: 'tier1', baseFeeFailedAt: now() })
      .where(eq(organizations.id, owner.organizationId));
    expect(expectData(await usage(owner, owner.organizationId))).toMatchObject({
      billingModel: 'pay_as_you_go',
      isPlanActive: false,
      isPlanPaid: false,
    });
  });

  it('answers 400 NO_ACTIVE_PLAN_RECORD when the organization has no plan record', async () => {
    const owner = await createUser();
    await db().delete(organizationPlans).where(eq(organizationPlans.organizationId, owner.organizationId));
    const result = await usage(owner, owner.organizationId);
    expectError(result, 400, 'NO_ACTIVE_PLAN_RECORD');
    expect(result.body.data).toBeUndefined();
  });

  it.each([
    ['an unknown deviceType', { deviceType: 'phone' }, ['query.deviceType']],
    ['an empty deviceId', { deviceId: '' }, ['query.deviceId']],
    ['a deviceId over 200 characters', { deviceId: 'd'.repeat(201) }, ['query.deviceId']],
    ['a deviceId with a NUL character', { deviceId: 'dev\u0000ice' }, ['query.deviceId']],
    ['both bad', { deviceId: '', deviceType: 'IOS' }, ['query.deviceId', 'query.deviceType']],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, query, fields) => {
    const owner = await createUser();
    expectError(await usage(owner, owner.organizationId, query), 400, 'VALIDATION_FAILED', fields);
  });

  it('answers 403 NOT_A_MEMBER for an orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(await usage(owner, 'not-a-uuid'), 403, 'NOT_A_MEMBER');
  });
});

describeSecurity(routes.getOrganizationUsage, {
  request: ({ organizationId }) => ({ path: { orgId: organizationId } }),
});

describe('GET /organization/{orgId}/usages-stat security', () => {
  it('answers 403 NOT_A_MEMBER to a member of another organization, with no figures', async () => {
    const owner = await createUser();
    const stranger = await createUser();
    await registerDevice(owner.organizationId, 'secret-device');
    const result = await usage(stranger, owner.organizationId, { deviceId: 'secret-device' });
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
  });

  it('answers 403 NOT_A_MEMBER before NO_ACTIVE_PLAN_RECORD (an outsider learns nothing)', async () => {
    const owner = await createUser();
    const stranger = await createUser();
    await db().delete(organizationPlans).where(eq(organizationPlans.organizationId, owner.organizationId));
    expectError(await usage(stranger, owner.organizationId), 403, 'NOT_A_MEMBER');
  });

  it('answers an automation token with organization:read with the figures', async () => {
    const owner = await createUser();
    const reader = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['organization:read'] } }),
    );
    expect(expectData(await usage({ accessToken: reader.token }, owner.organizationId)).seatsUsed).toBe(1);
  });
});
