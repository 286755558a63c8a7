import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { caseAccess } from '../../lib/db/schema';
import { addMember, createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { ownerWithCase } from '../harness/cases';

describe('PUT /cases/{caseId}/access/{userId}', () => {
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
});

describeSecurity(routes.grantCaseAccess, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, userId: (await addMember(organizationId, 'member')).id },
    body: { access: 'viewer' },
  }),
  succeeds: true,
});
