import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { caseAccess } from '../../lib/db/schema';
import { addMember } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { ownerWithCase } from '../harness/cases';

describe('DELETE /cases/{caseId}/access/{userId}', () => {
  it("takes a member's access away: the case is no longer theirs to read", async () => {
    // Prepare: a colleague who views the case
    const { owner, as, created } = await ownerWithCase();
    const colleague = await addMember(owner.organizationId, 'member');
    await db().insert(caseAccess).values({ caseId: created.id, userId: colleague.id, access: 'viewer' });
    // Act
    const result = await invoke(routes.revokeCaseAccess, { ...as, path: { caseId: created.id, userId: colleague.id } });
    // Assess
    expect(expectData(result)).toEqual({ message: 'Access revoked' });
    expectError(
      await invoke(routes.getCase, {
        token: colleague.accessToken,
        organization: owner.organizationId,
        path: { caseId: created.id },
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
  });

  it('answers 404 for a member without access, and 400 LAST_OWNER for the only owner', async () => {
    const { owner, as, created } = await ownerWithCase();
    const colleague = await addMember(owner.organizationId, 'member');
    expectError(
      await invoke(routes.revokeCaseAccess, { ...as, path: { caseId: created.id, userId: colleague.id } }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await invoke(routes.revokeCaseAccess, { ...as, path: { caseId: created.id, userId: owner.id } }),
      400,
      'LAST_OWNER',
    );
    expect(await db().select().from(caseAccess).where(eq(caseAccess.caseId, created.id))).toHaveLength(1);
  });
});

describeSecurity(routes.revokeCaseAccess, {
  request: async ({ caseId, organizationId }) => {
    const colleague = await addMember(organizationId, 'member');
    await db().insert(caseAccess).values({ caseId, userId: colleague.id, access: 'viewer' });
    return { path: { caseId, userId: colleague.id } };
  },
  succeeds: true,
});
