import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { drainLocalImports } from '../../lib/material/imports';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { asOwner, storedImport } from './import-flow';
import { caseWithOwner } from '../harness/cases';

// Retries queue imports for the in-process worker: each test leaves none running.
afterEach(() => drainLocalImports());

describe('POST /cases/{caseId}/imports/{importId}/retry', () => {
  it('queues a failed import again, clearing its error, and the worker finishes it', async () => {
    // Prepare: an import that failed, its file stored
    const s = await caseWithOwner();
    const row = await storedImport(s.caseId, s.organizationId, 'failed');
    const path = { caseId: s.caseId, importId: row.id };
    // Act
    const retried = expectData(await invoke(routes.retryImport, { ...asOwner(s), path }), 202);
    await drainLocalImports();
    // Assess
    expect(retried).toMatchObject({ id: row.id, status: 'queued', error: null });
    expect(expectData(await invoke(routes.getImport, { ...asOwner(s), path }))).toMatchObject({ status: 'succeeded' });
  });

  it('is 409 IMPORT_NOT_FAILED for an import that did not fail, and 404 for an unknown import', async () => {
    const s = await caseWithOwner();
    const row = await storedImport(s.caseId, s.organizationId, 'awaiting_upload');
    expectError(
      await invoke(routes.retryImport, { ...asOwner(s), path: { caseId: s.caseId, importId: row.id } }),
      409,
      'IMPORT_NOT_FAILED',
    );
    expectError(
      await invoke(routes.retryImport, { ...asOwner(s), path: { caseId: s.caseId, importId: 'no-such-import' } }),
      404,
      'NOT_FOUND',
    );
  });
});

describeSecurity(routes.retryImport, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, importId: (await storedImport(caseId, organizationId, 'failed')).id },
  }),
  succeeds: true,
});
