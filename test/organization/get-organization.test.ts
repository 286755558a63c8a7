import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { organizationPlans, organizations } from '../../lib/db/schema';
import { addMember, createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { UNKNOWN_ID } from '../harness/ids';

const getOrganization = (caller: { accessToken?: string }, orgId: string) =>
  invoke(routes.getOrganization, { token: caller.accessToken, path: { orgId } });

describe('GET /organization/{orgId}', () => {
  it("returns the organization, the caller's permission and the billing summary, without the active plan", async () => {
    // Prepare
    const owner = await createUser({ organizationName: 'Get Details & Co' });
    await db()
      .update(organizations)
      .set({
        city: 'Lyon',
        country: 'FR',
        phone: ['+33 1 23'],
        metadata: { crm: 'x-1' },
        description: 'Evidence boutique',
      })
      .where(eq(organizations.id, owner.organizationId));
    // Act
    const data = expectData(await getOrganization(owner, owner.organizationId));
    // Assess
    const [row] = await db().select().from(organizations).where(eq(organizations.id, owner.organizationId));
    expect(data).toEqual({
      organization: {
        id: owner.organizationId,
        name: 'Get Details & Co',
        slug: 'get-details-co',
        email: owner.email,
        contact: '',
        city: 'Lyon',
        state: '',
        country: 'FR',
        description: 'Evidence boutique',
        phone: ['+33 1 23'],
        logo: null,
        isActive: true,
        isPriority: false,
        activePlan: null,
        metadata: { crm: 'x-1' },
        address: null,
        communicationPreferences: {},
        bankLinkingTerms: { accepted: false, acceptedAt: null, acceptedBy: null },
        type: row!.type,
        version: 'v2',
        createdAt: row!.createdAt.toISOString(),
        updatedAt: row!.updatedAt.toISOString(),
      },
      permission: { role: 'owner' },
      billing: {
        billingMode: 'free',
        onCaseBilling: false,
        tier: null,
        cadence: null,
        hasPaymentMethod: false,
        delinquent: false,
      },
    });
  });

  it.each([['admin'], ['full_access'], ['employee'], ['billing'], ['member'], ['user'], ['client']] as const)(
    'answers a %s with their own role as permission',
    async (role) => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, role);
      const data = expectData(await getOrganization(member, owner.organizationId));
      expect(data.organization.id).toBe(owner.organizationId);
      expect(data.permission).toEqual({ role });
    },
  );

  it('answers while the plan is inactive (reading needs no active plan)', async () => {
    const owner = await createUser();
    await db()
      .update(organizationPlans)
      .set({ isActive: false })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    expect(expectData(await getOrganization(owner, owner.organizationId)).organization.id).toBe(owner.organizationId);
  });

  it('answers billing null for a legacy-billed organization', async () => {
    const owner = await createUser();
    await db().update(organizations).set({ billingMode: 'legacy' }).where(eq(organizations.id, owner.organizationId));
    expect(expectData(await getOrganization(owner, owner.organizationId)).billing).toBeNull();
  });

  it('reports a self-serve tier and delinquency in the billing summary', async () => {
    const owner = await createUser();
    await db()
      .update(organizations)
      .set({
        billingMode: 'pay_as_you_go',
        billingTier: 'tier2',
        billingCadence: 'annual',
        hasPaymentMethod: true,
        baseFeeFailedAt: new Date(Date.now() - 8 * 86_400_000),
      })
      .where(eq(organizations.id, owner.organizationId));
    expect(expectData(await getOrganization(owner, owner.organizationId)).billing).toEqual({
      billingMode: 'pay_as_you_go',
      onCaseBilling: true,
      tier: 'tier2',
      cadence: 'annual',
      hasPaymentMethod: true,
      delinquent: true,
    });
  });

  it('answers 403 NOT_A_MEMBER for an orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(await getOrganization(owner, 'acme'), 403, 'NOT_A_MEMBER');
  });

  it('answers 400 naming path.orgId for an orgId over 200 characters or with a NUL character', async () => {
    const owner = await createUser();
    expectError(await getOrganization(owner, 'o'.repeat(201)), 400, 'VALIDATION_FAILED', ['path.orgId']);
    expectError(await getOrganization(owner, 'ac\u0000me'), 400, 'VALIDATION_FAILED', ['path.orgId']);
  });
});

describeSecurity(routes.getOrganization, { request: ({ organizationId }) => ({ path: { orgId: organizationId } }) });

describe('GET /organization/{orgId} security', () => {
  it('answers 403 NOT_A_MEMBER to a member of another organization, with no data', async () => {
    const owner = await createUser({ organizationName: 'Secret Holdings' });
    const stranger = await createUser();
    const result = await getOrganization(stranger, owner.organizationId);
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
    expect(JSON.stringify(result.body)).not.toContain('Secret Holdings');
  });

  it('answers 403 NOT_A_MEMBER for an unknown organization, like one the caller is not in', async () => {
    const caller = await createUser();
    expectError(await getOrganization(caller, UNKNOWN_ID), 403, 'NOT_A_MEMBER');
  });

  it("answers an automation token with organization:read with its owner's permission", async () => {
    const owner = await createUser();
    const reader = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['organization:read'] } }),
    );
    expect(expectData(await getOrganization({ accessToken: reader.token }, owner.organizationId)).permission).toEqual({
      role: 'owner',
    });
  });
});
