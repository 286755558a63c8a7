import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { evidenceImports, storageReservations } from '../../lib/db/schema';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { asOwner, importBody, MBOX, TICKETS } from './import-flow';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { setPlanStorage } from '../harness/plans';

describe('POST /cases/{caseId}/imports', () => {
  it('answers 201 with the import awaiting its upload and a PUT link for the file', async () => {
    // Prepare
    const s = await caseWithOwner();
    // Act
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: importBody('email', MBOX) }),
      201,
    );
    // Assess
    expect(created.import).toMatchObject({
      caseId: s.caseId,
      kind: 'email',
      fileName: 'client mailbox.mbox',
      sizeBytes: Buffer.byteLength(MBOX),
      status: 'awaiting_upload',
    });
    expect(created.upload).toMatchObject({ method: 'PUT' });
    const [row] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, created.import.id));
    expect(row).toMatchObject({ caseId: s.caseId, status: 'awaiting_upload' });
  });

  it('a bad body is 400 naming the field; a profile is required for network and chat imports', async () => {
    const s = await caseWithOwner();
    const create = (body: object) => invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body });
    expectError(await create({ ...importBody('email', MBOX), kind: 'pst' }), 400, 'VALIDATION_FAILED', ['body.kind']);
    expectError(await create({ ...importBody('email', MBOX), sizeBytes: 0 }), 400, 'VALIDATION_FAILED', [
      'body.sizeBytes',
    ]);
    const { profile: _profile, ...noProfile } = importBody('chat-platform', TICKETS);
    expectError(await create(noProfile), 400, 'VALIDATION_FAILED', ['body.profile']);
    // A field the API does not know is ignored.
    expectData(await create({ ...importBody('email', MBOX), colour: 'blue' }), 201);
  });

  it('refuses an import whose file does not fit in what is left of the plan (403 STORAGE_LIMIT_REACHED), reserving nothing', async () => {
    const s = await caseWithOwner();
    await setPlanStorage(s.organizationId, 100);
    const refused = await invoke(routes.createImport, {
      ...asOwner(s),
      path: { caseId: s.caseId },
      body: { ...importBody('email', MBOX), sizeBytes: 101 },
    });
    expectError(refused, 403, 'STORAGE_LIMIT_REACHED');
    expect(await db().select().from(evidenceImports).where(eq(evidenceImports.caseId, s.caseId))).toEqual([]);
    expect(await db().select().from(storageReservations).where(eq(storageReservations.caseId, s.caseId))).toEqual([]);
  });

  it('two links together cannot promise more than the plan holds', async () => {
    const s = await caseWithOwner();
    await setPlanStorage(s.organizationId, 1000);
    const create = () =>
      invoke(routes.createImport, {
        ...asOwner(s),
        path: { caseId: s.caseId },
        body: { ...importBody('email', MBOX), sizeBytes: 600 },
      });
    const answers = await Promise.all([create(), create()]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 403]);
  });

  it('a viewer of the case is refused (403); an admin of the case may import', async () => {
    const s = await caseWithOwner();
    const viewer = await memberWithAccess(s.organizationId, s.caseId, 'viewer');
    const admin = await memberWithAccess(s.organizationId, s.caseId, 'admin');
    const body = importBody('email', MBOX);
    expectError(
      await invoke(routes.createImport, {
        token: viewer.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
        body,
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectError(
      await invoke(routes.listImports, {
        token: viewer.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectData(
      await invoke(routes.createImport, {
        token: admin.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
        body,
      }),
      201,
    );
  });
});

describeSecurity(routes.createImport, {
  request: ({ caseId }) => ({ path: { caseId }, body: importBody('email', MBOX) }),
  succeeds: true,
});
