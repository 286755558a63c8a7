import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { caseAccess, cases } from '../../lib/db/schema';
import { addMember } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { ownerWithCase } from '../harness/cases';

describe('DELETE /cases/{caseId}', () => {
  it('soft-deletes the case: it is gone from reads and lists, and its row stays', async () => {
    // Prepare
    const { as, created } = await ownerWithCase();
    const path = { caseId: created.id };
    // Act
    expect(expectData(await invoke(routes.deleteCase, { ...as, path }))).toEqual({
      message: 'Case "Lee v. Roe" deleted',
    });
    // Assess
    expectError(await invoke(routes.getCase, { ...as, path }), 404, 'NOT_FOUND');
    expect(expectData(await invoke(routes.listCases, { ...as, query: { includeArchived: 'true' } })).total).toBe(0);
    const [row] = await db().select().from(cases).where(eq(cases.id, created.id));
    expect(row!.deletedAt).not.toBeNull();
  });

  it('answers 404 for a case already deleted', async () => {
    const { as, created } = await ownerWithCase();
    expectData(await invoke(routes.deleteCase, { ...as, path: { caseId: created.id } }));
    expectError(await invoke(routes.deleteCase, { ...as, path: { caseId: created.id } }), 404, 'NOT_FOUND');
  });

  it('refuses a viewer of the case, and keeps the case', async () => {
    const { owner, as, created } = await ownerWithCase();
    const viewer = await addMember(owner.organizationId, 'member');
    await db().insert(caseAccess).values({ caseId: created.id, userId: viewer.id, access: 'viewer' });
    expectError(
      await invoke(routes.deleteCase, {
        token: viewer.accessToken,
        organization: owner.organizationId,
        path: { caseId: created.id },
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectData(await invoke(routes.getCase, { ...as, path: { caseId: created.id } }));
  });
});

describeSecurity(routes.deleteCase, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });
