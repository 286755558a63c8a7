import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { ownerWithCase } from '../harness/cases';

describe('GET /cases/{caseId}', () => {
  it("answers the case with the caller's access", async () => {
    const { owner, as, created } = await ownerWithCase();
    expect(expectData(await invoke(routes.getCase, { ...as, path: { caseId: created.id } }))).toMatchObject({
      id: created.id,
      organizationId: owner.organizationId,
      name: 'Lee v. Roe',
      access: 'owner',
    });
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
});

describeSecurity(routes.getCase, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });
