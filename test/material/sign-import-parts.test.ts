import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { asOwner, importRowOf, multipartImportOf } from './import-flow';
import { caseWithOwner } from '../harness/cases';

// The journey of an upload in parts (signing, PUTs, resuming, start) is in import-multipart.test.ts.
describe('POST /cases/{caseId}/imports/{importId}/parts', () => {
  it('answers a signed PUT link for each part asked, at the part size', async () => {
    // Prepare: an import of 1,000 bytes awaiting its parts (one part at the part size in use)
    const s = await caseWithOwner();
    const { path } = await multipartImportOf(s.caseId, s.organizationId);
    // Act
    const signed = expectData(
      await invoke(routes.signImportParts, { ...asOwner(s), path, body: { partNumbers: [1] } }),
    );
    // Assess
    expect(signed.parts).toEqual([
      expect.objectContaining({ partNumber: 1, sizeBytes: 1000, method: 'PUT', url: expect.any(String) }),
    ]);
    expect(new Date(signed.expiresAt).getTime()).toBeGreaterThan(Date.now());
  });

  it.each([
    [[2], 'body.partNumbers.0'],
    [[0], 'body.partNumbers.0'],
    [[], 'body.partNumbers'],
    [[1, 1], 'body.partNumbers'],
  ])('answers 400 naming the field for part numbers %j', async (partNumbers, field) => {
    const s = await caseWithOwner();
    const { path } = await multipartImportOf(s.caseId, s.organizationId);
    expectError(
      await invoke(routes.signImportParts, { ...asOwner(s), path, body: { partNumbers } }),
      400,
      'VALIDATION_FAILED',
      [field],
    );
  });

  it('is 409 IMPORT_NOT_MULTIPART for an import uploaded in one PUT', async () => {
    const s = await caseWithOwner();
    const row = await importRowOf(s.caseId, s.organizationId);
    expectError(
      await invoke(routes.signImportParts, {
        ...asOwner(s),
        path: { caseId: s.caseId, importId: row.id },
        body: { partNumbers: [1] },
      }),
      409,
      'IMPORT_NOT_MULTIPART',
    );
  });
});

describeSecurity(routes.signImportParts, {
  request: async ({ caseId, organizationId }) => ({
    ...(await multipartImportOf(caseId, organizationId)),
    body: { partNumbers: [1] },
  }),
  succeeds: true,
});
