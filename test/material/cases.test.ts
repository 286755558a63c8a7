import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { caseAccess } from '../../lib/db/schema';
import { addMember, createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { putOnPlan } from '../billing/billing-helpers';

async function ownerWithCase(name = 'Lee v. Roe') {
  const owner = await createUser();
  const as = { token: owner.accessToken, organization: owner.organizationId };
  const created = expectData(await invoke(routes.createCase, { ...as, body: { name } }), 201);
  return { owner, as, created };
}

describe('case extension routes', () => {
  it('creates a case in the header organization with the creator as owner, then lists and gets it', async () => {
    const { owner, as, created } = await ownerWithCase();
    expect(created).toMatchObject({
      organizationId: owner.organizationId,
      name: 'Lee v. Roe',
      isPro: false,
      archivedAt: null,
      deletedAt: null,
      access: 'owner',
    });
    const list = expectData(await invoke(routes.listCases, as));
    expect(list).toMatchObject({ total: 1, data: [expect.objectContaining({ id: created.id })] });
    expect(expectData(await invoke(routes.getCase, { ...as, path: { caseId: created.id } }))).toMatchObject({
      id: created.id,
      access: 'owner',
    });
  });

  it('renames, archives (hidden from the list unless asked), restores and soft-deletes', async () => {
    const { as, created } = await ownerWithCase();
    const path = { caseId: created.id };
    expect(expectData(await invoke(routes.updateCase, { ...as, path, body: { name: 'Renamed' } })).name).toBe(
      'Renamed',
    );
    const archived = expectData(await invoke(routes.updateCase, { ...as, path, body: { archived: true } }));
    expect(archived.archivedAt).not.toBeNull();
    expect(expectData(await invoke(routes.listCases, as)).total).toBe(0);
    expect(expectData(await invoke(routes.listCases, { ...as, query: { includeArchived: 'true' } })).total).toBe(1);
    expect(
      expectData(await invoke(routes.updateCase, { ...as, path, body: { archived: false } })).archivedAt,
    ).toBeNull();
    expectData(await invoke(routes.deleteCase, { ...as, path }));
    expectError(await invoke(routes.getCase, { ...as, path }), 404, 'NOT_FOUND');
    expect(expectData(await invoke(routes.listCases, { ...as, query: { includeArchived: 'true' } })).total).toBe(0);
  });

  it('grants and revokes access to members; viewers read but do not manage; the last owner stays', async () => {
    const { owner, as, created } = await ownerWithCase();
    const path = (userId: string) => ({ caseId: created.id, userId });
    const colleague = await addMember(owner.organizationId, 'member');
    expect(
      expectData(await invoke(routes.grantCaseAccess, { ...as, path: path(colleague.id), body: { access: 'viewer' } })),
    ).toEqual({ caseId: created.id, userId: colleague.id, access: 'viewer' });
    const asColleague = { token: colleague.accessToken, organization: owner.organizationId };
    expect(expectData(await invoke(routes.getCase, { ...asColleague, path: { caseId: created.id } })).access).toBe(
      'viewer',
    );
    expectError(
      await invoke(routes.updateCase, { ...asColleague, path: { caseId: created.id }, body: { name: 'Nope' } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectError(
      await invoke(routes.grantCaseAccess, { ...asColleague, path: path(colleague.id), body: { access: 'owner' } }),
      403,
      'INSUFFICIENT_ROLE',
    );

    expectError(await invoke(routes.revokeCaseAccess, { ...as, path: path(owner.id) }), 400, 'LAST_OWNER');
    expectError(
      await invoke(routes.grantCaseAccess, { ...as, path: path(owner.id), body: { access: 'viewer' } }),
      400,
      'LAST_OWNER',
    );
    expectData(await invoke(routes.revokeCaseAccess, { ...as, path: path(colleague.id) }));
    expectError(
      await invoke(routes.getCase, { ...asColleague, path: { caseId: created.id } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectError(await invoke(routes.revokeCaseAccess, { ...as, path: path(colleague.id) }), 404, 'NOT_FOUND');
    expect(await db().select().from(caseAccess).where(eq(caseAccess.caseId, created.id))).toHaveLength(1);
  });

  it('lets a case admin manage viewers but not demote or remove an owner; a second owner may', async () => {
    // Prepare: the creator owns the case; a case admin and a second owner
    const { owner, as, created } = await ownerWithCase();
    const path = (userId: string) => ({ caseId: created.id, userId });
    const caseAdmin = await addMember(owner.organizationId, 'member');
    const secondOwner = await addMember(owner.organizationId, 'member');
    expectData(await invoke(routes.grantCaseAccess, { ...as, path: path(caseAdmin.id), body: { access: 'admin' } }));
    expectData(await invoke(routes.grantCaseAccess, { ...as, path: path(secondOwner.id), body: { access: 'owner' } }));
    const asAdmin = { token: caseAdmin.accessToken, organization: owner.organizationId };
    const viewer = await addMember(owner.organizationId, 'member');
    // Act / Assess
    expectData(await invoke(routes.grantCaseAccess, { ...asAdmin, path: path(viewer.id), body: { access: 'viewer' } }));
    expectError(
      await invoke(routes.grantCaseAccess, { ...asAdmin, path: path(owner.id), body: { access: 'viewer' } }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectError(await invoke(routes.revokeCaseAccess, { ...asAdmin, path: path(owner.id) }), 403, 'INSUFFICIENT_ROLE');
    const accessOf = async (userId: string) =>
      (await db().select().from(caseAccess).where(eq(caseAccess.caseId, created.id))).find((a) => a.userId === userId)
        ?.access;
    expect(await accessOf(owner.id)).toBe('owner');
    const asSecondOwner = { token: secondOwner.accessToken, organization: owner.organizationId };
    expect(
      expectData(
        await invoke(routes.grantCaseAccess, { ...asSecondOwner, path: path(owner.id), body: { access: 'admin' } }),
      ).access,
    ).toBe('admin');
    expect(await accessOf(owner.id)).toBe('admin');
  });

  it('answers 400 naming the field for a rename Postgres cannot hold, never a 500', async () => {
    const { as, created } = await ownerWithCase();
    expectError(
      await invoke(routes.updateCase, { ...as, path: { caseId: created.id }, body: { name: 'Re\u0000named' } }),
      400,
      'VALIDATION_FAILED',
      ['body.name'],
    );
  });

  it('grants access only to members of the organization', async () => {
    const { as, created } = await ownerWithCase();
    const outsider = await createUser();
    expectError(
      await invoke(routes.grantCaseAccess, {
        ...as,
        path: { caseId: created.id, userId: outsider.id },
        body: { access: 'viewer' },
      }),
      404,
      'NOT_FOUND',
    );
  });

  it('never shows a case to another organization, even with its own header', async () => {
    const { created } = await ownerWithCase();
    const other = await createUser();
    const asOther = { token: other.accessToken, organization: other.organizationId };
    const refused = await invoke(routes.getCase, { ...asOther, path: { caseId: created.id } });
    expectError(refused, 403, 'FORBIDDEN');
    expect(JSON.stringify(refused.body)).not.toContain('Lee v. Roe');
    expectError(
      await invoke(routes.getCase, {
        token: other.accessToken,
        organization: created.organizationId,
        path: { caseId: created.id },
      }),
      403,
      'NOT_A_MEMBER',
    );
    expectError(await invoke(routes.deleteCase, { ...asOther, path: { caseId: created.id } }), 403, 'FORBIDDEN');
  });

  it.each([
    [{}, 'body.name'],
    [{ name: '' }, 'body.name'],
    [{ name: 'x'.repeat(101) }, 'body.name'],
    [{ name: 'Lee\u0000Roe' }, 'body.name'],
  ])('answers 400 naming the field for %j', async (body, field) => {
    const owner = await createUser();
    expectError(
      await invoke(routes.createCase, { token: owner.accessToken, organization: owner.organizationId, body }),
      400,
      'VALIDATION_FAILED',
      [field],
    );
  });

  it('ignores a field the contract does not show (tolerant reader): the case is opened without it', async () => {
    const owner = await createUser();
    const created = expectData(
      await invoke(routes.createCase, {
        token: owner.accessToken,
        organization: owner.organizationId,
        body: { name: 'Extra v. Field', isPro: true, extra: 1 },
      }),
      201,
    );
    expect(created).toMatchObject({ name: 'Extra v. Field', isPro: false });
    expect(created).not.toHaveProperty('extra');
  });
});

// Every role and token kind opens a case in one organization: more than the free plan's cases a
// month, so the organization is on a tier without a case cap (the cap: test/billing/cases-per-month).
describeSecurity(routes.createCase, {
  request: () => ({ body: { name: 'Secured v. Case' } }),
  succeeds: true,
  setup: async (owner) => void (await putOnPlan(owner, 'tier5', { card: true })),
});
describeSecurity(routes.listCases, { request: () => ({}), succeeds: true });
describeSecurity(routes.getCase, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });
describeSecurity(routes.updateCase, {
  request: ({ caseId }) => ({ path: { caseId }, body: { name: 'Renamed' } }),
  succeeds: true,
});
describeSecurity(routes.deleteCase, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });
describeSecurity(routes.grantCaseAccess, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, userId: (await addMember(organizationId, 'member')).id },
    body: { access: 'viewer' },
  }),
  succeeds: true,
});
describeSecurity(routes.revokeCaseAccess, {
  request: async ({ caseId, organizationId }) => {
    const colleague = await addMember(organizationId, 'member');
    await db().insert(caseAccess).values({ caseId, userId: colleague.id, access: 'viewer' });
    return { path: { caseId, userId: colleague.id } };
  },
  succeeds: true,
});
