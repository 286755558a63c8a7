import type { Readable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { emails, evidenceImports, evidenceObjects } from '../../lib/db/schema';
import { runImport } from '../../lib/material/imports/run';
import { objectStorage, stagingKeyOf } from '../../lib/storage';
import { expectData, invoke } from '../harness/invoke';
import { asOwner, importServer, mboxMessage, sha256 } from './import-flow';
import { caseWithOwner } from '../harness/cases';
import { importNotesOf } from '../harness/material';

/**
 * Issue 29, item 1: the bytes imported are the bytes hashed, and nothing can change them after.
 * Upload links write a staging key; the worker copies the upload into the case's evidence key (no
 * link covers it), hashing exactly what it copies, and every later run re-checks that hash.
 */

const flow = importServer();

/** An mbox message the importer refuses ("not a header"), and a forged one of exactly the same length. */
const MALFORMED = 'From sender@example Mon Nov  2 10:00:00 2026\nthis line is not a header\n\nbody\n';
const FORGED = 'From sender@example Mon Nov  2 10:00:00 2026\nSubject: FORGED!!!!!!!!!!\n\nbody\n';
const FILE_A = `${mboxMessage('one', 'One')}${MALFORMED}`;
const FILE_B = `${mboxMessage('one', 'One')}${FORGED}`;

const subjectsOf = async (caseId: string) =>
  (await db().select({ subject: emails.subject }).from(emails).where(eq(emails.caseId, caseId))).map((e) => e.subject);

async function textOf(stream: Readable | null): Promise<string> {
  if (!stream) return '<none>';
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

const rowOf = async (importId: string) =>
  (await db().select().from(evidenceImports).where(eq(evidenceImports.id, importId)))[0]!;

describe('an upload cannot be swapped once its import started', () => {
  it('a PUT through the link after start is refused, and the retry imports the hashed file, not a forgery', async () => {
    expect(FORGED.length).toBe(MALFORMED.length);
    const s = await caseWithOwner();
    const created = await flow.createUploaded(s, FILE_A);
    const failed = await flow.startAndWait(s, created.import.id);
    expect(failed).toMatchObject({ status: 'failed', sha256: sha256(FILE_A), error: { code: 'MALFORMED_FILE' } });

    // The attack: file B, the same size, through the same (unexpired) link.
    const swap = await flow.put(created.upload, FILE_B);
    expect(swap.status).toBe(409);
    const retried = await flow.startAndWait(s, created.import.id, routes.retryImport);

    expect(retried).toMatchObject({ status: 'failed', sha256: sha256(FILE_A), error: { code: 'MALFORMED_FILE' } });
    expect(await subjectsOf(s.caseId)).toEqual(['One']);
    const row = await rowOf(created.import.id);
    expect(await textOf(await objectStorage().read(row.objectKey))).toBe(FILE_A);
    const custody = expectData(await invoke(routes.getCaseCustody, { ...asOwner(s), path: { caseId: s.caseId } }));
    expect(custody.items.data.find((item: { kind: string }) => item.kind === 'import_file')).toMatchObject({
      sha256: sha256(FILE_A),
    });
  });

  it('a PUT after the import succeeded changes nothing: refused, and the source file is what was hashed', async () => {
    const s = await caseWithOwner();
    const text = `${mboxMessage('one', 'One')}${mboxMessage('two', 'Two')}`;
    const created = await flow.createUploaded(s, text);
    expect(await flow.startAndWait(s, created.import.id)).toMatchObject({ status: 'succeeded', sha256: sha256(text) });
    const row = await rowOf(created.import.id);

    const overwrite = await flow.put(created.upload, text.replace('Two', 'Owt'));

    expect(overwrite.status).toBe(409);
    // The evidence copy is under the case's prefix, apart from what the link writes (now removed).
    expect(row.objectKey).toMatch(new RegExp(`^cases/${s.caseId}/imports/`));
    expect(row.stagingKey).toBe(stagingKeyOf(row.objectKey));
    expect(await objectStorage().size(row.stagingKey!)).toBeNull();
    expect(await textOf(await objectStorage().read(row.objectKey))).toBe(text);
    const [object] = await db().select().from(evidenceObjects).where(eq(evidenceObjects.key, row.objectKey));
    expect(object).toMatchObject({ sha256: sha256(text), sizeBytes: Buffer.byteLength(text) });
  });

  it('an upload replaced between start and the worker (a cloud link cannot be refused) fails UPLOAD_CHANGED, importing nothing', async () => {
    const s = await caseWithOwner();
    const text = `${mboxMessage('one', 'One')}${mboxMessage('two', 'Two')}`;
    const created = await flow.createUploaded(s, text);
    // No worker in this process: the test runs it.
    await flow.startQueued(s, created.import.id);
    const row = await rowOf(created.import.id);
    // What S3 would do with a PUT through the still-valid presigned link.
    await objectStorage().put(row.stagingKey!, Buffer.from(text.replace('Two', 'Owt')), 'application/mbox');

    expect(await runImport(created.import.id)).toBe('failed');

    expect(await flow.read(s, created.import.id)).toMatchObject({
      status: 'failed',
      sha256: null,
      error: { code: 'UPLOAD_CHANGED' },
    });
    expect(await subjectsOf(s.caseId)).toEqual([]);
  });

  it('a retry re-checks the hash: evidence altered in storage since it was hashed fails UPLOAD_CHANGED', async () => {
    const s = await caseWithOwner();
    const created = await flow.createUploaded(s, FILE_A);
    expect(await flow.startAndWait(s, created.import.id)).toMatchObject({ status: 'failed' });
    const row = await rowOf(created.import.id);
    // Same size, other bytes, written where no link reaches (an operator, a storage fault).
    await objectStorage().put(row.objectKey, Buffer.from(FILE_B), 'application/mbox');

    const retried = await flow.startAndWait(s, created.import.id, routes.retryImport);

    expect(retried).toMatchObject({ status: 'failed', sha256: sha256(FILE_A), error: { code: 'UPLOAD_CHANGED' } });
    expect(retried.error.message).toContain(sha256(FILE_A));
    expect(await subjectsOf(s.caseId)).toEqual(['One']);
  });
});

describe('a device-note attachment, once imported, is immutable', () => {
  it('the upload is copied into evidence at import; a later PUT through its link is refused and changes nothing', async () => {
    const s = await caseWithOwner();
    const [link] = expectData(
      await invoke(routes.createAttachmentUploads, {
        ...asOwner(s),
        query: { caseId: s.caseId },
        body: { files: [{ name: 'photo.jpg', contentType: 'image/jpeg', size: 3 }] },
      }),
    ).uploads;
    expect((await flow.put(link, new Uint8Array([1, 2, 3]))).status).toBe(200);
    expectData(await importNotesOf(s, [{ id: 1, title: 'With photo', attachments: [link.key] }]));

    const overwrite = await flow.put(link, new Uint8Array([9, 9, 9]));

    expect(overwrite.status).toBe(409);
    expect(Buffer.from(await textOf(await objectStorage().read(link.key)), 'latin1')).toEqual(Buffer.from([1, 2, 3]));
    expect(await objectStorage().size(stagingKeyOf(link.key))).toBeNull();
    const [object] = await db().select().from(evidenceObjects).where(eq(evidenceObjects.key, link.key));
    expect(object).toMatchObject({ sha256: sha256(new Uint8Array([1, 2, 3])), sizeBytes: 3 });
  });
});
