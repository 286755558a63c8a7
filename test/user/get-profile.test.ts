import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { addDays, now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { organizationMembers, organizations, users } from '../../lib/db/schema';
import { createUser, type TestUser, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { type Auth, mintAutomationToken } from '../harness/tokens';
import { describeSecurity } from '../harness/security';

const T0 = new Date('2026-11-22T10:00:00.000Z');

const getProfile = (auth: Auth) => invoke(routes.getProfile, auth);

/** The fields the contract lets the profile show; nothing else of the user record (no hash, no flags). */
const PROFILE_FIELDS = [
  'createdAt',
  'email',
  'id',
  'isEmailVerified',
  'name',
  'onboardingStatus',
  'onboardingStep',
  'organizations',
  'phoneNumbers',
  'updatedAt',
  'userType',
];

/** Makes `user` a member of `organizationId` with `role` (a row, as the invitation routes are tested elsewhere). */
async function joinOrganization(
  user: TestUser,
  organizationId: string,
  role: (typeof organizationMembers.$inferInsert)['role'],
) {
  await db().insert(organizationMembers).values({ organizationId, userId: user.id, role });
}

describe('GET /user/profile', () => {
  it("returns the caller's own profile with the registration values", async () => {
    // Prepare
    testClock.freeze(T0);
    const user = await createUser({ name: 'Profile Owner', organizationName: 'Profile Own LLP' });
    // Act
    const result = await getProfile({ token: user.accessToken });
    // Assess
    const profile = expectData(result);
    expect(Object.keys(profile).sort()).toEqual(PROFILE_FIELDS);
    expect(profile).toEqual({
      id: user.id,
      email: user.email,
      name: 'Profile Owner',
      phoneNumbers: [],
      isEmailVerified: false,
      onboardingStatus: 'not_started',
      onboardingStep: 0,
      userType: null,
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
      organizations: [
        {
          organization: expect.objectContaining({
            id: user.organizationId,
            name: 'Profile Own LLP',
            activePlan: null,
            isActive: true,
          }),
          permission: { role: 'owner' },
          billing: {
            billingMode: 'free',
            onCaseBilling: false,
            tier: null,
            cadence: null,
            hasPaymentMethod: false,
            delinquent: false,
          },
        },
      ],
    });
  });

  it('shows every organization the user belongs to, oldest membership first, each with permission and billing', async () => {
    // Prepare: the user's own organization, a second one it creates, and three of other people.
    testClock.freeze(T0);
    const user = await createUser({ organizationName: 'Many Orgs Own LLP' });
    testClock.advance(1);
    const second = expectData(
      await invoke(routes.createOrganization, { token: user.accessToken, body: { name: 'Many Orgs Second LLP' } }),
      201,
    );
    testClock.advance(1);
    const payingOwner = await createUser({ organizationName: 'Many Orgs Paying LLP' });
    await db()
      .update(organizations)
      .set({ billingMode: 'pay_as_you_go', billingTier: 'tier2', billingCadence: 'annual', hasPaymentMethod: true })
      .where(eq(organizations.id, payingOwner.organizationId));
    await joinOrganization(user, payingOwner.organizationId, 'billing');
    testClock.advance(1);
    const legacyOwner = await createUser({ organizationName: 'Many Orgs Legacy LLP' });
    await db()
      .update(organizations)
      .set({ billingMode: 'legacy' })
      .where(eq(organizations.id, legacyOwner.organizationId));
    await joinOrganization(user, legacyOwner.organizationId, 'member');
    testClock.advance(1);
    const lateOwner = await createUser({ organizationName: 'Many Orgs Late LLP' });
    await db()
      .update(organizations)
      .set({
        billingMode: 'pay_as_you_go',
        billingTier: 'tier1',
        billingCadence: 'monthly',
        baseFeeFailedAt: addDays(now(), -8),
      })
      .where(eq(organizations.id, lateOwner.organizationId));
    await joinOrganization(user, lateOwner.organizationId, 'admin');
    // A stranger's organization the user does not belong to.
    await createUser({ organizationName: 'Many Orgs Stranger LLP' });
    // Act
    const profile = expectData(await getProfile({ token: user.accessToken }));
    // Assess
    expect(profile.organizations.map((o: { organization: { name: string } }) => o.organization.name)).toEqual([
      'Many Orgs Own LLP',
      'Many Orgs Second LLP',
      'Many Orgs Paying LLP',
      'Many Orgs Legacy LLP',
      'Many Orgs Late LLP',
    ]);
    expect(profile.organizations).toEqual([
      {
        organization: expect.objectContaining({ id: user.organizationId, activePlan: null }),
        permission: { role: 'owner' },
        billing: {
          billingMode: 'free',
          onCaseBilling: false,
          tier: null,
          cadence: null,
          hasPaymentMethod: false,
          delinquent: false,
        },
      },
      {
        organization: expect.objectContaining({
          id: second.organization.id,
          slug: second.organization.slug,
          activePlan: null,
        }),
        permission: { role: 'owner' },
        billing: expect.objectContaining({ billingMode: 'free', delinquent: false }),
      },
      {
        organization: expect.objectContaining({ id: payingOwner.organizationId }),
        permission: { role: 'billing' },
        billing: {
          billingMode: 'pay_as_you_go',
          onCaseBilling: true,
          tier: 'tier2',
          cadence: 'annual',
          hasPaymentMethod: true,
          delinquent: false,
        },
      },
      {
        organization: expect.objectContaining({ id: legacyOwner.organizationId }),
        permission: { role: 'member' },
        billing: null,
      },
      {
        organization: expect.objectContaining({ id: lateOwner.organizationId }),
        permission: { role: 'admin' },
        billing: {
          billingMode: 'pay_as_you_go',
          onCaseBilling: true,
          tier: 'tier1',
          cadence: 'monthly',
          hasPaymentMethod: false,
          delinquent: true,
        },
      },
    ]);
  });

  it('shows the organization entity fields of the contract', async () => {
    const user = await createUser({ organizationName: 'Entity Fields LLP' });
    const [entry] = expectData(await getProfile({ token: user.accessToken })).organizations;
    expect(Object.keys(entry).sort()).toEqual(['billing', 'organization', 'permission']);
    expect(entry.organization).toEqual({
      id: user.organizationId,
      name: 'Entity Fields LLP',
      slug: expect.stringMatching(/^entity-fields-llp/),
      email: user.email,
      contact: '',
      city: '',
      state: '',
      country: '',
      description: '',
      phone: [],
      logo: null,
      isActive: true,
      isPriority: false,
      activePlan: null,
      metadata: {},
      address: null,
      communicationPreferences: {},
      bankLinkingTerms: { accepted: false, acceptedAt: null, acceptedBy: null },
      type: expect.any(String),
      version: expect.stringMatching(/^(v1|v2|eu|ca)$/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it("shows the caller's profile, never another user's, whichever token is used", async () => {
    const alice = await createUser({ name: 'Alice Own' });
    const bob = await createUser({ name: 'Bob Own' });
    const bobToken = await mintAutomationToken(bob, ['profile:read']);
    expect(expectData(await getProfile({ token: alice.accessToken }))).toMatchObject({
      id: alice.id,
      email: alice.email,
      name: 'Alice Own',
    });
    expect(expectData(await getProfile({ token: bobToken.token }))).toMatchObject({
      id: bob.id,
      email: bob.email,
      name: 'Bob Own',
    });
  });

  it('reflects a change made through a route at once (the route drops the cached profile)', async () => {
    const user = await createUser();
    const before = expectData(await getProfile({ token: user.accessToken }));
    expect(before.organizations).toHaveLength(1);
    expectData(
      await invoke(routes.createOrganization, {
        token: user.accessToken,
        body: { name: `Cache Drop ${user.id.slice(0, 8)}` },
      }),
      201,
    );
    const after = expectData(await getProfile({ token: user.accessToken }));
    expect(after.organizations).toHaveLength(2);
  });

  it('answers from a cache no older than 60 seconds: a change made outside the routes shows once it has aged out', async () => {
    // Prepare: warm the cache, then change the row behind the service's back.
    testClock.freeze(T0);
    const user = await createUser({ name: 'Before Cache' });
    expect(expectData(await getProfile({ token: user.accessToken })).name).toBe('Before Cache');
    await db().update(users).set({ name: 'Behind The Back' }).where(eq(users.id, user.id));
    // Act: past the cache age
    testClock.advance(61);
    const result = await getProfile({ token: user.accessToken });
    // Assess
    expect(expectData(result).name).toBe('Behind The Back');
  });

  it('answers 401 ACCOUNT_INACTIVE even while a profile is cached', async () => {
    const user = await createUser();
    expectData(await getProfile({ token: user.accessToken }));
    await updateUserRow(user.id, { isActive: false });
    expectError(await getProfile({ token: user.accessToken }), 401, 'ACCOUNT_INACTIVE');
  });

  it('ignores query parameters (it takes none): never another user by id', async () => {
    const user = await createUser();
    const result = await invoke(routes.getProfile, {
      token: user.accessToken,
      query: { userId: '00000000-0000-4000-8000-000000000000' },
    });
    expect(expectData(result).id).toBe(user.id);
  });
});

describeSecurity(routes.getProfile, {
  request: () => ({}),
  // A let-through request must still be the caller's own profile.
  after: ({ user }, _request, result) => {
    if (result.status === 200) expect(result.body.data.id).toBe(user.id);
  },
  everyToken: true,
});
