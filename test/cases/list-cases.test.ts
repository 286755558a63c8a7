import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { caseAccess } from '../../lib/db/schema';
import { addMember, createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { ownerWithCase } from '../harness/cases';

describe('GET /cases', () => {
  it('lists only the cases the caller holds access to, with that access, in the header organization', async () => {
    // Prepare: two cases of one organization; a colleague holds access to one of them
    const { owner, as, created } = await ownerWithCase('Lee v. Roe');
    const second = expectData(await invoke(routes.createCase, { ...as, body: { name: 'Ames v. Cole' } }), 201);
    const colleague = await addMember(owner.organizationId, 'member');
    await db().insert(caseAccess).values({ caseId: second.id, userId: colleague.id, access: 'viewer' });
    // Act
    const mine = expectData(await invoke(routes.listCases, as));
    const theirs = expectData(
      await invoke(routes.listCases, { token: colleague.accessToken, organization: owner.organizationId }),
    );
    // Assess
    expect(mine.total).toBe(2);
    expect(mine.data.map((c: { id: string }) => c.id).sort()).toEqual([created.id, second.id].sort());
    expect(theirs).toMatchObject({ total: 1, data: [{ id: second.id, access: 'viewer' }] });
  });

  it('lists nothing of another organization', async () => {
    await ownerWithCase();
    const other = await createUser();
    const list = expectData(
      await invoke(routes.listCases, { token: other.accessToken, organization: other.organizationId }),
    );
    expect(list.total).toBe(0);
  });

  it.each([
    [{ perPage: '0' }, 'query.perPage'],
    [{ sortOrder: 'up' }, 'query.sortOrder'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const { as } = await ownerWithCase();
    expectError(await invoke(routes.listCases, { ...as, query }), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.listCases, { request: () => ({}), succeeds: true });
