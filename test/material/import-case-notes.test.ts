import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { cases, deviceNotes, devices, organizationPlans } from '../../lib/db/schema';
import { objectStorage } from '../../lib/storage';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { describeSecurity } from '../harness/security';

const body = (overrides: Record<string, unknown> = {}) => ({
  deviceId: 'device-1',
  deviceType: 'ios',
  deviceMetadata: { model: 'iPhone 15' },
  systemId: 'sys-1',
  appVersion: '3.2.0',
  osDetails: {
    arch: 'arm64',
    platform: 'darwin',
    version: '14.1',
    osType: 'Darwin',
    machine: 'mac',
    totalMemory: 16,
    cpus: { count: 8 },
    extraInformation: {},
  },
  notes: [
    { id: 1, title: 'Meeting', summary: 'Met Bob', createdAt: '2026-10-01', htmlContent: '<p>Met Bob</p>' },
    { id: 2, title: 'Call', metadata: { folder: 'Notes' } },
  ],
  ...overrides,
});

describe('POST /extraction/case/import-notes', () => {
  it('registers the device and stores the notes; re-importing the same ids adds nothing', async () => {
    const s = await caseWithOwner();
    const call = (payload: unknown) =>
      invoke(routes.importCaseNotes, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: payload,
      });
    const first = expectData(await call(body()));
    expect(first).toMatchObject({
      isSuccess: true,
      importedCount: 2,
      skippedCount: 0,
      message: expect.stringContaining('Imported 2 note(s)'),
    });
    const again = expectData(
      await call(
        body({
          notes: [
            { id: 2, title: 'Call (edited)' },
            { id: 3, title: 'New' },
          ],
        }),
      ),
    );
    expect(again).toMatchObject({
      importedCount: 1,
      skippedCount: 1,
      message: expect.stringContaining('1 already imported'),
    });

    const stored = await db().select().from(deviceNotes).where(eq(deviceNotes.caseId, s.caseId));
    expect(stored.map((n) => [n.noteId, n.title]).sort()).toEqual([
      [1, 'Meeting'],
      [2, 'Call'],
      [3, 'New'],
    ]);
    const [device] = await db().select().from(devices).where(eq(devices.organizationId, s.organizationId));
    expect(device).toMatchObject({
      deviceId: 'device-1',
      deviceType: 'ios',
      metadata: expect.objectContaining({ model: 'iPhone 15', systemId: 'sys-1', appVersion: '3.2.0' }),
    });
  });

  it('links attachments already in object storage, and imports nothing when one is missing', async () => {
    const s = await caseWithOwner();
    await objectStorage().put(`cases/${s.caseId}/notes/photo.jpg`, new Uint8Array([1, 2, 3]), 'image/jpeg');
    const call = (notes: unknown[]) =>
      invoke(routes.importCaseNotes, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: body({ notes }),
      });
    const ok = expectData(
      await call([{ id: 7, title: 'With photo', attachments: [`cases/${s.caseId}/notes/photo.jpg`] }]),
    );
    expect(ok.importedCount).toBe(1);
    const missing = await call([
      {
        id: 8,
        title: 'Broken',
        attachments: [`cases/${s.caseId}/notes/photo.jpg`, `cases/${s.caseId}/notes/missing.jpg`],
      },
    ]);
    expectError(missing, 400, 'VALIDATION_FAILED', ['body.notes.0.attachments.1']);
    expect(missing.body.error.details).toHaveLength(1);
    expect(missing.body.error.details[0].message).toContain('missing.jpg');
    const stored = await db().select().from(deviceNotes).where(eq(deviceNotes.caseId, s.caseId));
    expect(stored.map((n) => n.noteId)).toEqual([7]);
    expect(stored[0]!.attachmentKeys).toEqual([`cases/${s.caseId}/notes/photo.jpg`]);
  });

  it("counts linked attachments toward the case's storage once per object, whichever notes link it", async () => {
    // Prepare: two objects of 3 and 5 bytes in the case's prefix
    const s = await caseWithOwner();
    const photo = `cases/${s.caseId}/notes/photo.jpg`;
    const scan = `cases/${s.caseId}/notes/scan.pdf`;
    await objectStorage().put(photo, new Uint8Array(3), 'image/jpeg');
    await objectStorage().put(scan, new Uint8Array(5), 'application/pdf');
    const call = (notes: unknown[]) =>
      invoke(routes.importCaseNotes, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: body({ notes }),
      });
    const storageOfCase = async () =>
      (await db().select({ bytes: cases.storageBytes }).from(cases).where(eq(cases.id, s.caseId)))[0]!.bytes;
    // Act / Assess
    expectData(
      await call([
        { id: 1, title: 'Photo', attachments: [photo] },
        { id: 2, title: 'Same photo', attachments: [photo] },
      ]),
    );
    expect(await storageOfCase()).toBe(3);
    expectData(await call([{ id: 3, title: 'Photo and scan', attachments: [photo, scan] }]));
    expect(await storageOfCase()).toBe(8);
    // Re-importing notes already there adds nothing.
    expectData(await call([{ id: 3, title: 'Photo and scan', attachments: [photo, scan] }]));
    expect(await storageOfCase()).toBe(8);
  });

  it('refuses references outside the case prefix, even to objects that exist, without looking them up', async () => {
    // Prepare: an object of another organization's case, which exists
    const s = await caseWithOwner();
    const other = await caseWithOwner();
    const foreign = `cases/${other.caseId}/notes/secret.pdf`;
    await objectStorage().put(foreign, new Uint8Array([1]), 'application/pdf');
    const call = (attachments: string[]) =>
      invoke(routes.importCaseNotes, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: body({ notes: [{ id: 1, title: 'x', attachments }] }),
      });
    // Act / Assess: the same 400 whether the object exists or not, so nothing is learnt about it
    for (const key of [
      foreign,
      `cases/${other.caseId}/notes/nothing.pdf`,
      `cases/${s.caseId}/../${other.caseId}/notes/secret.pdf`,
      `cases/${s.caseId}/`,
      `uploads/${s.caseId}/a.jpg`,
    ]) {
      const result = await call([key]);
      expectError(result, 400, 'VALIDATION_FAILED', ['body.notes.0.attachments.0']);
      expect(result.body.error.details[0].message).toBe(`Attachments must be uploaded under cases/${s.caseId}/`);
    }
    expect(await db().select().from(deviceNotes).where(eq(deviceNotes.caseId, s.caseId))).toHaveLength(0);
  });

  it('refuses a new device beyond the plan allowance', async () => {
    const s = await caseWithOwner();
    await db()
      .update(organizationPlans)
      .set({ devices: 1 })
      .where(eq(organizationPlans.organizationId, s.organizationId));
    const call = (deviceId: string) =>
      invoke(routes.importCaseNotes, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: body({ deviceId }),
      });
    expectData(await call('first'));
    expectData(await call('first'));
    expectError(await call('second'), 403, 'DEVICE_LIMIT_REACHED');
  });

  it.each([
    [{ deviceType: 'fax' }, 'body.deviceType'],
    [{ deviceId: undefined }, 'body.deviceId'],
    [{ osDetails: { arch: 'x' } }, 'body.osDetails.cpus'],
    [{ notes: [{ id: 'one', title: 'x' }] }, 'body.notes.0.id'],
    [{ notes: [{ id: 1 }] }, 'body.notes.0.title'],
    [
      {
        notes: [
          { id: 1, title: 'a' },
          { id: 2, title: 'b' },
          { id: 1, title: 'c' },
        ],
      },
      'body.notes.2.id',
    ],
    // Postgres text and jsonb cannot hold NUL: bad input, never a 500.
    [{ notes: [{ id: 1, title: 'Me\u0000eting' }] }, 'body.notes.0.title'],
    [{ notes: [{ id: 1, title: 'x', metadata: { folder: ['No\u0000tes'] } }] }, 'body.notes.0.metadata.folder.0'],
    [{ deviceId: 'device\u0000' }, 'body.deviceId'],
    [{ osDetails: { cpus: {}, extraInformation: { 'k\u0000': 1 } } }, 'body.osDetails.extraInformation'],
  ])('answers 400 naming the field for %j', async (change, field) => {
    const s = await caseWithOwner();
    expectError(
      await invoke(routes.importCaseNotes, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: body(change),
      }),
      400,
      'VALIDATION_FAILED',
      [field],
    );
  });

  it('needs the caseId, the organization header, and owner or admin access to a case of that organization', async () => {
    const s = await caseWithOwner();
    expectError(
      await invoke(routes.importCaseNotes, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        body: body(),
      }),
      400,
      'VALIDATION_FAILED',
      ['query.caseId'],
    );
    expectError(
      await invoke(routes.importCaseNotes, { token: s.owner.accessToken, query: { caseId: s.caseId }, body: body() }),
      400,
      'VALIDATION_FAILED',
      ['headers.organization'],
    );
    const viewer = await memberWithAccess(s.organizationId, s.caseId, 'viewer');
    expectError(
      await invoke(routes.importCaseNotes, {
        token: viewer.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: body(),
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
    const other = await createUser();
    expectError(
      await invoke(routes.importCaseNotes, {
        token: other.accessToken,
        organization: other.organizationId,
        query: { caseId: s.caseId },
        body: body(),
      }),
      403,
      'FORBIDDEN',
    );
    expect(await db().select().from(deviceNotes).where(eq(deviceNotes.caseId, s.caseId))).toHaveLength(0);
  });
});

describeSecurity(routes.importCaseNotes, { request: ({ caseId }) => ({ query: { caseId }, body: body() }) });
