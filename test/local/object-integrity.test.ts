import type { Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { db } from '../../lib/db/client';
import { attachments, emails, evidenceObjects } from '../../lib/db/schema';
import { LocalMailSink } from '../../lib/mail/transport';
import { importEmailFile } from '../../lib/material/importers/email';
import { objectStorage } from '../../lib/storage';
import { auditEventsOf } from '../harness/audit';
import { ownDataDir } from '../harness/data-dir';
import { expectData, invoke } from '../harness/invoke';
import { uploadHeaders } from '../harness/uploads';
import { caseWithOwner } from '../harness/cases';
import { extractorDevice, sha256sum, sha256sumOf as sha256sumInDirectory } from '../harness/material';

/**
 * Issue 16: a download through the local server's signed link (the stand-in for a presigned S3
 * GET) hashes an evidence object before serving it, serves it only when it matches the hash
 * recorded at import, and records either outcome in the case organization's audit trail.
 */

/** Objects go to a directory of this file's own, registered first: its hooks run around the server's. */
const dataDir = ownDataDir('object-integrity-');
let server: Server;
let base: string;

beforeAll(async () => {
  server = createLocalServer({ mailSink: new LocalMailSink() });
  base = await listen(server, 0);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A link as the service hands it out, sent to this test's server. */
const onServer = (url: string) => {
  const link = new URL(url);
  return `${base}${link.pathname}${link.search}`;
};

const sha256sumOf = (name: string, bytes: Uint8Array) => sha256sumInDirectory(dataDir.path, name, bytes);
const pathOf = (key: string) => join(dataDir.path, 'objects', ...key.split('/'));
const download = async (key: string) => fetch(onServer(await objectStorage().downloadUrl(key, 600)));

/** A note attachment as the desktop extractor sends it: an upload link, a PUT, and the import that links it. */
async function uploadNoteAttachment(s: Awaited<ReturnType<typeof caseWithOwner>>, bytes: Uint8Array) {
  const { uploads } = expectData(
    await invoke(routes.createAttachmentUploads, {
      token: s.owner.accessToken,
      organization: s.organizationId,
      query: { caseId: s.caseId },
      body: { files: [{ name: 'scan.jpg', contentType: 'image/jpeg', size: bytes.length }] },
    }),
  );
  const [upload] = uploads;
  const put = await fetch(onServer(upload.url), {
    method: 'PUT',
    headers: uploadHeaders(upload.headers, bytes),
    body: bytes,
  });
  expect(put.status).toBe(200);
  expectData(
    await invoke(routes.importCaseNotes, {
      token: s.owner.accessToken,
      organization: s.organizationId,
      query: { caseId: s.caseId },
      body: { ...extractorDevice('phone-1'), notes: [{ id: 1, title: 'Scan', attachments: [upload.key] }] },
    }),
  );
  return upload.key as string;
}

describe('evidence objects at download (local signed links)', () => {
  it('a note attachment uploaded through its link is hashed at import as sha256sum of the bytes sent', async () => {
    // Prepare
    const s = await caseWithOwner();
    const bytes = new Uint8Array(100_000).map((_, index) => (index * 31) % 251);
    // Act
    const key = await uploadNoteAttachment(s, bytes);
    // Assess
    const [object] = await db().select().from(evidenceObjects).where(eq(evidenceObjects.key, key));
    expect(object).toMatchObject({ caseId: s.caseId, sha256: sha256sumOf('sent.jpg', bytes), sizeBytes: bytes.length });
    const [links] = await auditEventsOf(s.organizationId, 'evidence.attachment_uploads.created');
    expect(links).toMatchObject({ caseId: s.caseId, metadata: { count: 1, keys: [key] } });
    const [imported] = await auditEventsOf(s.organizationId, 'evidence.notes.imported');
    expect(imported).toMatchObject({
      caseId: s.caseId,
      metadata: expect.objectContaining({ deviceId: 'phone-1', imported: 1, attachments: 1 }),
    });
  });

  it('serves an intact evidence object and records the download', async () => {
    // Prepare
    const s = await caseWithOwner();
    const bytes = new TextEncoder().encode('photo of the signed contract');
    const key = await uploadNoteAttachment(s, bytes);
    // Act
    const response = await download(key);
    // Assess
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    const events = await auditEventsOf(s.organizationId, 'evidence.object.downloaded');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      caseId: s.caseId,
      actorType: 'anonymous',
      targetType: 'object',
      targetId: key,
      requestId: response.headers.get('x-request-id'),
      metadata: { sha256: sha256sumOf('intact.jpg', bytes), sizeBytes: bytes.length },
    });
  });

  it('refuses a tampered object (same size, other bytes) with 409 and records the integrity failure', async () => {
    // Prepare: the object changed on disk after import
    const s = await caseWithOwner();
    const bytes = new TextEncoder().encode('photo of the signed contract');
    const key = await uploadNoteAttachment(s, bytes);
    const forged = new TextEncoder().encode('photo of the forged contract');
    expect(forged.length).toBe(bytes.length);
    writeFileSync(pathOf(key), forged);
    // Act
    const response = await download(key);
    // Assess: the error envelope, and none of the object's bytes
    expect(response.status).toBe(409);
    const body = await response.json();
    expect(body).toMatchObject({ statusCode: 409, error: { code: 'CONFLICT' } });
    expect(JSON.stringify(body)).not.toContain('forged');
    const failures = await auditEventsOf(s.organizationId, 'evidence.object.integrity_failed');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      caseId: s.caseId,
      targetType: 'object',
      targetId: key,
      metadata: {
        expectedSha256: sha256sumOf('expected.jpg', bytes),
        actualSha256: sha256sum(pathOf(key)),
        expectedSizeBytes: bytes.length,
        actualSizeBytes: forged.length,
      },
    });
    expect(await auditEventsOf(s.organizationId, 'evidence.object.downloaded')).toHaveLength(0);
    // Put back as imported, it is served again
    writeFileSync(pathOf(key), bytes);
    expect((await download(key)).status).toBe(200);
  });

  it('checks an email attachment stored by the importer; a truncated one is refused', async () => {
    // Prepare
    const s = await caseWithOwner();
    await importEmailFile(
      s.caseId,
      join(import.meta.dirname, '..', 'material', 'fixtures', 'evidence', 'settlement.eml'),
    );
    const [annex] = await db()
      .select({ key: attachments.providerId, sha256: attachments.sha256 })
      .from(attachments)
      .innerJoin(emails, eq(emails.id, attachments.emailId))
      .where(eq(emails.caseId, s.caseId));
    // Act and assess: intact, then cut short
    const intact = await download(annex!.key);
    expect(intact.status).toBe(200);
    expect(sha256sumOf('annex.pdf', new Uint8Array(await intact.arrayBuffer()))).toBe(annex!.sha256);
    writeFileSync(pathOf(annex!.key), readFileSync(pathOf(annex!.key)).subarray(0, 10));
    expect((await download(annex!.key)).status).toBe(409);
    const [failure] = await auditEventsOf(s.organizationId, 'evidence.object.integrity_failed');
    expect(failure).toMatchObject({ targetId: annex!.key, metadata: expect.objectContaining({ actualSizeBytes: 10 }) });
  });

  it('serves objects that are not evidence (a billing report) as before, recording nothing', async () => {
    // Prepare
    const s = await caseWithOwner();
    await objectStorage().put('reports/statement.pdf', new TextEncoder().encode('%PDF report'), 'application/pdf');
    // Act
    const response = await download('reports/statement.pdf');
    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(await response.text()).toBe('%PDF report');
    expect(await auditEventsOf(s.organizationId, 'evidence.object.downloaded')).toHaveLength(0);
  });
});
