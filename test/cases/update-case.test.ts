import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { ownerWithCase } from '../harness/cases';

describe('PATCH /cases/{caseId}', () => {
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

  it('answers 400 naming the field for a rename Postgres cannot hold, never a 500', async () => {
    const { as, created } = await ownerWithCase();
    expectError(
      await invoke(routes.updateCase, { ...as, path: { caseId: created.id }, body: { name: 'Re\u0000named' } }),
      400,
      'VALIDATION_FAILED',
      ['body.name'],
    );
  });
});

describeSecurity(routes.updateCase, {
  request: ({ caseId }) => ({ path: { caseId }, body: { name: 'Renamed' } }),
  succeeds: true,
});
