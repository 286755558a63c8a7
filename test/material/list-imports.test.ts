import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { asOwner, importBody, MBOX } from './import-flow';
import { caseWithOwner } from '../harness/cases';

describe('GET /cases/{caseId}/imports', () => {
  it('lists the case imports newest first, paged; another case of the organization does not see them', async () => {
    const s = await caseWithOwner();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const created = expectData(
        await invoke(routes.createImport, {
          ...asOwner(s),
          path: { caseId: s.caseId },
          body: importBody('email', MBOX),
        }),
        201,
      );
      ids.push(created.import.id);
    }
    const page = expectData(
      await invoke(routes.listImports, {
        ...asOwner(s),
        path: { caseId: s.caseId },
        query: { page: '1', perPage: '2' },
      }),
    );
    expect(page).toMatchObject({ total: 3, page: 1, perPage: 2, totalPages: 2 });
    expect(page.data.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);
    const other = await caseWithOwner();
    expectError(
      await invoke(routes.getImport, { ...asOwner(s), path: { caseId: s.caseId, importId: 'no-such-import' } }),
      404,
      'NOT_FOUND',
    );
    // Another organization's owner naming this case and import.
    const foreign = await invoke(routes.getImport, {
      token: other.owner.accessToken,
      organization: other.organizationId,
      path: { caseId: s.caseId, importId: ids[0]! },
    });
    expect([403, 404]).toContain(foreign.status);
  });

  it.each([
    [{ perPage: '0' }, 'query.perPage'],
    [{ page: '0' }, 'query.page'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const s = await caseWithOwner();
    expectError(
      await invoke(routes.listImports, { ...asOwner(s), path: { caseId: s.caseId }, query }),
      400,
      'VALIDATION_FAILED',
      [field],
    );
  });
});

describeSecurity(routes.listImports, {
  request: ({ caseId }) => ({ path: { caseId } }),
  succeeds: true,
});
