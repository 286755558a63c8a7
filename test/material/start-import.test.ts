import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { cases, evidenceImports } from '../../lib/db/schema';
import { drainLocalImports } from '../../lib/material/imports';
import { objectStorage } from '../../lib/storage';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { asOwner, importBody, importServer, MBOX, storedImport } from './import-flow';
import { caseWithOwner } from '../harness/cases';

const flow = importServer();
const { upload } = flow;

describe('POST /cases/{caseId}/imports/{importId}/start', () => {
  it('is 409 UPLOAD_INCOMPLETE before the upload and for a file of another size; 409 IMPORT_ALREADY_STARTED twice', async () => {
    const s = await caseWithOwner();
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: importBody('email', MBOX) }),
      201,
    );
    const path = { caseId: s.caseId, importId: created.import.id };
    expect(created.import).toMatchObject({ status: 'awaiting_upload', sha256: null, startedAt: null });
    expect(created.upload).toMatchObject({ method: 'PUT', headers: { 'content-type': 'application/mbox' } });
    expect(created.upload.url).toContain(encodeURIComponent(created.import.id));
    expectError(await invoke(routes.startImport, { ...asOwner(s), path }), 409, 'UPLOAD_INCOMPLETE');
    // The local upload route refuses a body shorter than the link's size (as S3 does): written
    // behind its back, a file of another size is still refused at the start.
    const [row] = await db()
      .select({ key: evidenceImports.objectKey })
      .from(evidenceImports)
      .where(eq(evidenceImports.id, created.import.id));
    await objectStorage().put(row!.key, new TextEncoder().encode(MBOX.slice(0, 40)), 'application/mbox');
    expectError(await invoke(routes.startImport, { ...asOwner(s), path }), 409, 'UPLOAD_INCOMPLETE');
    await upload(created, MBOX);
    expectData(await invoke(routes.startImport, { ...asOwner(s), path }), 202);
    expectError(await invoke(routes.startImport, { ...asOwner(s), path }), 409, 'IMPORT_ALREADY_STARTED');
    await drainLocalImports();
    expectError(await invoke(routes.startImport, { ...asOwner(s), path }), 409, 'IMPORT_ALREADY_STARTED');
    // Retrying what did not fail is refused too.
    expectError(await invoke(routes.retryImport, { ...asOwner(s), path }), 409, 'IMPORT_NOT_FAILED');
  });

  it('two concurrent starts of one import queue it once', async () => {
    const s = await caseWithOwner();
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: importBody('email', MBOX) }),
      201,
    );
    await upload(created, MBOX);
    const path = { caseId: s.caseId, importId: created.import.id };
    const answers = await Promise.all([1, 2, 3].map(() => invoke(routes.startImport, { ...asOwner(s), path })));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409, 409]);
    await drainLocalImports();
    const [stored] = await db().select({ bytes: cases.storageBytes }).from(cases).where(eq(cases.id, s.caseId));
    expect(stored!.bytes).toBe(Buffer.byteLength(MBOX));
  });
});

describeSecurity(routes.startImport, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, importId: (await storedImport(caseId, organizationId, 'awaiting_upload')).id },
  }),
  succeeds: true,
});
