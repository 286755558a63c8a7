import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { cases, storageReservations } from '../../lib/db/schema';
import { rowBytesOf, storedTextBytes } from '../../lib/material/importers/run-batches';
import { drainLocalImports } from '../../lib/material/imports/queue';
import { UPLOAD_LINK_SECONDS } from '../../lib/material/uploads';
import { runMaintenance } from '../../lib/maintenance';
import { objectStorage, stagingKeyOf } from '../../lib/storage';
import { signIn } from '../harness/actors';
import { ownDataDir } from '../harness/data-dir';
import { expectData, expectError, invoke } from '../harness/invoke';
import { caseWithOwner } from '../harness/cases';
import { importNotesOf } from '../harness/material';
import { setPlanStorage } from '../harness/plans';

/**
 * Issue 29, item 6: bytes kept count until they are removed. An upload never started counts until
 * maintenance removes its object; a deleted case counts while its objects and rows remain.
 */

ownDataDir('storage-kept-');

type Setup = Awaited<ReturnType<typeof caseWithOwner>>;

const DAY = 86_400;

const usage = async (s: Setup) =>
  expectData(
    await invoke(routes.getOrganizationUsage, { token: s.owner.accessToken, path: { orgId: s.organizationId } }),
  );

const uploadLinks = (s: Setup, sizes: number[]) =>
  invoke(routes.createAttachmentUploads, {
    token: s.owner.accessToken,
    organization: s.organizationId,
    query: { caseId: s.caseId },
    body: {
      files: sizes.map((size, index) => ({ name: `file-${index}.bin`, contentType: 'application/octet-stream', size })),
    },
  });

const reservationsOf = (caseId: string) =>
  db().select().from(storageReservations).where(eq(storageReservations.caseId, caseId));

/** Moves the clock on, past the access token's life too (sign in again). */
async function later(s: Setup, seconds: number) {
  testClock.advance(seconds);
  s.owner.accessToken = (await signIn(s.owner)).accessToken;
}

describe('an upload never started', () => {
  it('counts after its link lapses, until maintenance removes its object and then its reservation', async () => {
    // Prepare: a 1,000-byte plan, all of it promised to one link, whose file is uploaded and never imported
    const s = await caseWithOwner();
    await setPlanStorage(s.organizationId, 1_000);
    const [link] = expectData(await uploadLinks(s, [1_000])).uploads;
    await objectStorage().put(stagingKeyOf(link.key), new Uint8Array(1_000), 'application/octet-stream');
    // Act: the link lapses, and a day after it too
    await later(s, UPLOAD_LINK_SECONDS + DAY + 60);
    // Assess: the object is still stored, so it still counts
    expect(await objectStorage().size(stagingKeyOf(link.key))).toBe(1_000);
    expectError(await uploadLinks(s, [1]), 403, 'STORAGE_LIMIT_REACHED');
    // Act: maintenance removes it
    await runMaintenance();
    // Assess: the object and its reservation are gone, and so is what they counted
    expect(await objectStorage().size(stagingKeyOf(link.key))).toBeNull();
    expect(await reservationsOf(s.caseId)).toEqual([]);
    expectData(await uploadLinks(s, [1_000]));
  });

  it('keeps a lapsed upload for a day after its link, so an import started late still finds its file', async () => {
    const s = await caseWithOwner();
    const [link] = expectData(await uploadLinks(s, [10])).uploads;
    await objectStorage().put(stagingKeyOf(link.key), new Uint8Array(10), 'application/octet-stream');
    await later(s, UPLOAD_LINK_SECONDS + 60);
    await runMaintenance();
    expect(await objectStorage().size(stagingKeyOf(link.key))).toBe(10);
    expect(await reservationsOf(s.caseId)).toHaveLength(1);
  });

  it('removes lapsed uploads in bounded batches until none is left', async () => {
    const s = await caseWithOwner();
    // More than one batch of them (two requests: a request asks for at most 100 links)
    const uploads = [
      ...expectData(
        await uploadLinks(
          s,
          Array.from({ length: 60 }, () => 1),
        ),
      ).uploads,
      ...expectData(
        await uploadLinks(
          s,
          Array.from({ length: 60 }, () => 1),
        ),
      ).uploads,
    ];
    await Promise.all(
      uploads.map((link: { key: string }) =>
        objectStorage().put(stagingKeyOf(link.key), new Uint8Array(1), 'application/octet-stream'),
      ),
    );
    await later(s, UPLOAD_LINK_SECONDS + DAY + 60);
    await runMaintenance();
    expect(await reservationsOf(s.caseId)).toEqual([]);
    expect(await objectStorage().size(stagingKeyOf(uploads[119].key))).toBeNull();
  });

  it('leaves an import that started alone: its file stays, counted on the case', async () => {
    // Prepare: an import created, uploaded and started
    const s = await caseWithOwner();
    const text = [
      'CONVERSATION ID,CONVERSATION TITLE,FROM,TO,DATE,SUBJECT,CONTENT,FOLDER',
      'c1,Offer,Ann Lee,Bob Roe,2026-11-02 10:00:00 UTC,Offer,We offer terms,INBOX',
    ].join('\n');
    const created = expectData(
      await invoke(routes.createImport, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
        body: {
          kind: 'professional-network',
          fileName: 'messages.csv',
          contentType: 'text/csv',
          sizeBytes: Buffer.byteLength(text),
          profile: 'ann.lee',
        },
      }),
      201,
    );
    const [reservation] = await reservationsOf(s.caseId);
    await objectStorage().put(reservation!.objectKey, Buffer.from(text), 'text/csv');
    expectData(
      await invoke(routes.startImport, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId, importId: created.import.id },
      }),
      202,
    );
    await drainLocalImports();
    const used = (await usage(s)).storageUsed;
    // Act
    await later(s, UPLOAD_LINK_SECONDS + DAY + 60);
    await runMaintenance();
    // Assess
    const done = expectData(
      await invoke(routes.getImport, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId, importId: created.import.id },
      }),
    );
    expect(done.status).toBe('succeeded');
    expect((await usage(s)).storageUsed).toBe(used);
    expect(used).toBeGreaterThanOrEqual(Buffer.byteLength(text));
  });
});

describe('taking over a reservation after its link lapsed', () => {
  const noteRow = (note: unknown) => rowBytesOf('deviceNote', 1, storedTextBytes(note));

  it('a note import that links the upload releases its reservation, expired or not', async () => {
    // Prepare: a plan of the link's 100 bytes and the note's row; the upload is 70 bytes
    const s = await caseWithOwner();
    await setPlanStorage(s.organizationId, 100);
    const [link] = expectData(await uploadLinks(s, [100])).uploads;
    const note = { id: 1, title: 'Upload', attachments: [link.key] };
    await setPlanStorage(s.organizationId, 100 + noteRow(note));
    await objectStorage().put(stagingKeyOf(link.key), new Uint8Array(70), 'application/octet-stream');
    await later(s, UPLOAD_LINK_SECONDS + 60);
    // Act: imported after the link lapsed, within the day maintenance waits
    expectData(await importNotesOf(s, [note]));
    // Assess: the reservation is gone and the 30 bytes it no longer holds are free
    expect(await reservationsOf(s.caseId)).toEqual([]);
    expectData(await uploadLinks(s, [30]));
    expectError(await uploadLinks(s, [1]), 403, 'STORAGE_LIMIT_REACHED');
  });
  it('an import started after its link lapsed releases its reservation, expired or not', async () => {
    // Prepare: a plan of exactly the file's size, promised to its link
    const s = await caseWithOwner();
    const text = 'CONVERSATION ID,CONVERSATION TITLE,FROM,TO,DATE,SUBJECT,CONTENT,FOLDER\n';
    await setPlanStorage(s.organizationId, Buffer.byteLength(text));
    const created = expectData(
      await invoke(routes.createImport, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
        body: {
          kind: 'professional-network',
          fileName: 'messages.csv',
          contentType: 'text/csv',
          sizeBytes: Buffer.byteLength(text),
          profile: 'ann.lee',
        },
      }),
      201,
    );
    const [reservation] = await reservationsOf(s.caseId);
    await objectStorage().put(reservation!.objectKey, Buffer.from(text), 'text/csv');
    await later(s, UPLOAD_LINK_SECONDS + 60);
    // Act / Assess: the file takes the reservation's place
    expectData(
      await invoke(routes.startImport, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId, importId: created.import.id },
      }),
      202,
    );
    expect(await reservationsOf(s.caseId)).toEqual([]);
  });
});

describe('a deleted case', () => {
  it('counts its bytes while they are kept', async () => {
    // Prepare
    const s = await caseWithOwner();
    await db().update(cases).set({ storageBytes: 4_321 }).where(eq(cases.id, s.caseId));
    expect((await usage(s)).storageUsed).toBe(4_321);
    // Act
    expectData(
      await invoke(routes.deleteCase, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
      }),
    );
    // Assess: the soft delete keeps its objects and rows, so they still count
    expect((await usage(s)).storageUsed).toBe(4_321);
  });
});
