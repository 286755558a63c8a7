import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { asOwner, importRowOf, multipartImportOf } from './import-flow';
import { caseWithOwner } from '../harness/cases';

// Listing parts that arrived to resume a dropped upload is in import-multipart.test.ts.
describe('GET /cases/{caseId}/imports/{importId}/parts', () => {
  it('answers the part size and count, and no parts before any arrived', async () => {
    // Prepare: an import of 1,000 bytes awaiting its parts
    const s = await caseWithOwner();
    const { path } = await multipartImportOf(s.caseId, s.organizationId);
    // Act
    const listed = expectData(await invoke(routes.listImportParts, { ...asOwner(s), path }));
    // Assess
    expect(listed).toEqual({ partSize: expect.any(Number), partCount: 1, parts: [] });
  });

  it('is 409 IMPORT_NOT_MULTIPART for an import uploaded in one PUT, and 404 for an unknown import', async () => {
    const s = await caseWithOwner();
    const row = await importRowOf(s.caseId, s.organizationId);
    expectError(
      await invoke(routes.listImportParts, { ...asOwner(s), path: { caseId: s.caseId, importId: row.id } }),
      409,
      'IMPORT_NOT_MULTIPART',
    );
    expectError(
      await invoke(routes.listImportParts, { ...asOwner(s), path: { caseId: s.caseId, importId: 'no-such-import' } }),
      404,
      'NOT_FOUND',
    );
  });
});

describeSecurity(routes.listImportParts, {
  request: ({ caseId, organizationId }) => multipartImportOf(caseId, organizationId),
  succeeds: true,
});
