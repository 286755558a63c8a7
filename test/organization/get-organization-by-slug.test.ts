import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { organizationPlans, organizations } from '../../lib/db/schema';
import { addMember, createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

const bySlug = (caller: { accessToken?: string }, slug: string) =>
  invoke(routes.getOrganizationBySlug, { token: caller.accessToken, path: { slug } });

const slugOf = async (orgId: string) =>
  (await db().select({ slug: organizations.slug }).from(organizations).where(eq(organizations.id, orgId)))[0]!.slug;

describe('GET /organization/slug/{slug}', () => {
  it('returns the same details as the lookup by id', async () => {
    // Prepare
    const owner = await createUser({ organizationName: 'Slug Lookup Partners' });
    // Act
    const data = expectData(await bySlug(owner, 'slug-lookup-partners'));
    // Assess
    const byId = expectData(
      await invoke(routes.getOrganization, { token: owner.accessToken, path: { orgId: owner.organizationId } }),
    );
    expect(data).toEqual(byId);
    expect(data.organization).toMatchObject({
      id: owner.organizationId,
      name: 'Slug Lookup Partners',
      slug: 'slug-lookup-partners',
      activePlan: null,
    });
    expect(data.permission).toEqual({ role: 'owner' });
  });

  it.each([['admin'], ['member'], ['billing'], ['client'], ['user']] as const)(
    'works for a %s, with their role',
    async (role) => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, role);
      const data = expectData(await bySlug(member, await slugOf(owner.organizationId)));
      expect(data.organization.id).toBe(owner.organizationId);
      expect(data.permission).toEqual({ role });
    },
  );

  it('answers while the plan is inactive', async () => {
    const owner = await createUser();
    await db()
      .update(organizationPlans)
      .set({ isActive: false })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    expect(expectData(await bySlug(owner, await slugOf(owner.organizationId))).organization.id).toBe(
      owner.organizationId,
    );
  });

  it('answers 403 NOT_A_MEMBER for an unknown slug', async () => {
    const caller = await createUser();
    const result = await bySlug(caller, 'no-such-organization-anywhere');
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
  });

  it('no longer finds the organization by its old slug after a rename', async () => {
    const owner = await createUser({ organizationName: 'Before Rename LLP' });
    const patched = expectData(
      await invoke(routes.updateOrganization, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId },
        body: { name: 'After Rename LLP' },
      }),
      201,
    );
    expect(patched.organization.slug).toBe('after-rename-llp');
    expectError(await bySlug(owner, 'before-rename-llp'), 403, 'NOT_A_MEMBER');
    expect(expectData(await bySlug(owner, 'after-rename-llp')).organization.id).toBe(owner.organizationId);
  });

  it('answers 400 naming path.slug for a slug over 80 characters', async () => {
    const caller = await createUser();
    expectError(await bySlug(caller, 's'.repeat(81)), 400, 'VALIDATION_FAILED', ['path.slug']);
  });

  it('answers 400 naming path.slug for a slug with a NUL character (not a 500 from the database)', async () => {
    const caller = await createUser();
    expectError(await bySlug(caller, 'acme\u0000'), 400, 'VALIDATION_FAILED', ['path.slug']);
  });
});

describeSecurity(routes.getOrganizationBySlug, {
  request: async ({ organizationId }) => ({ path: { slug: await slugOf(organizationId) } }),
});

describe('GET /organization/slug/{slug} security', () => {
  it("answers 403 NOT_A_MEMBER for another organization's slug, with no data", async () => {
    const owner = await createUser({ organizationName: 'Other Slug Holdings' });
    const stranger = await createUser();
    const result = await bySlug(stranger, 'other-slug-holdings');
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
    expect(JSON.stringify(result.body)).not.toContain(owner.organizationId);
  });

  it('answers an automation token with organization:read with the organization', async () => {
    const owner = await createUser();
    const slug = await slugOf(owner.organizationId);
    const reader = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['organization:read'] } }),
    );
    expect(expectData(await bySlug({ accessToken: reader.token }, slug)).organization.id).toBe(owner.organizationId);
  });
});
