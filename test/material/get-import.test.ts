import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { caseAccess, cases } from '../../lib/db/schema';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { asOwner, MBOX, storedImport } from './import-flow';
import { caseWithOwner } from '../harness/cases';

describe('GET /cases/{caseId}/imports/{importId}', () => {
  it('answers the import with its status and progress', async () => {
    const s = await caseWithOwner();
    const row = await storedImport(s.caseId, s.organizationId, 'awaiting_upload');
    const read = expectData(
      await invoke(routes.getImport, { ...asOwner(s), path: { caseId: s.caseId, importId: row.id } }),
    );
    expect(read).toMatchObject({
      id: row.id,
      caseId: s.caseId,
      status: 'awaiting_upload',
      sizeBytes: Buffer.byteLength(MBOX),
      sha256: null,
      error: null,
    });
  });

  it('answers 404 for an unknown import and for an import of another case of the organization', async () => {
    const s = await caseWithOwner();
    const row = await storedImport(s.caseId, s.organizationId, 'awaiting_upload');
    const [otherCase] = await db()
      .insert(cases)
      .values({ organizationId: s.organizationId, name: 'Other v. Case' })
      .returning();
    await db().insert(caseAccess).values({ caseId: otherCase!.id, userId: s.owner.id, access: 'owner' });
    expectError(
      await invoke(routes.getImport, { ...asOwner(s), path: { caseId: s.caseId, importId: 'no-such-import' } }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await invoke(routes.getImport, { ...asOwner(s), path: { caseId: otherCase!.id, importId: row.id } }),
      404,
      'NOT_FOUND',
    );
  });
});

describeSecurity(routes.getImport, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, importId: (await storedImport(caseId, organizationId, 'awaiting_upload')).id },
  }),
  succeeds: true,
});
