import type { Server } from 'node:http';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { deviceNotes } from '../../lib/db/schema';
import { UPLOAD_LINK_SECONDS } from '../../lib/material/uploads';
import { objectStorage, stagingKeyOf } from '../../lib/storage';
import { expectData, expectError, invoke } from '../harness/invoke';
import { mailSink } from '../harness/setup';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { importNotesOf } from '../harness/material';
import { describeSecurity } from '../harness/security';
import { uploadHeaders } from '../harness/uploads';

/**
 * The desktop extractor's upload step: signed PUT links under the case's prefix, an upload through
 * the local server's stand-in for a presigned S3 PUT, and the import that links the object.
 */

let server: Server;
let base: string;

beforeAll(async () => {
  server = createLocalServer({ mailSink });
  base = await listen(server, 0);
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The link on this test's server (links name PUBLIC_BASE_URL, the configured local server). */
const onServer = (url: string) => {
  const link = new URL(url);
  return `${base}${link.pathname}${link.search}`;
};

const photo = { name: 'IMG 0001.jpg', contentType: 'image/jpeg', size: 3 };

async function linksFor(s: Awaited<ReturnType<typeof caseWithOwner>>, files: unknown[] = [photo]) {
  return invoke(routes.createAttachmentUploads, {
    token: s.owner.accessToken,
    organization: s.organizationId,
    query: { caseId: s.caseId },
    body: { files },
  });
}

describe('POST /extraction/case/attachment-uploads', () => {
  it('gives a signed PUT link under the case prefix; the uploaded object is then linked by a note import', async () => {
    // Prepare
    const s = await caseWithOwner();
    const { uploads } = expectData(
      await linksFor(s, [photo, { name: '../../secret.pdf', contentType: 'application/pdf', size: 10 }]),
    );
    // Act: upload the photo as the extractor would, then import a note that references it
    const [image, pdf] = uploads;
    const photoBytes = new Uint8Array([1, 2, 3]);
    const put = await fetch(onServer(image.url), {
      method: 'PUT',
      headers: uploadHeaders(image.headers, photoBytes),
      body: photoBytes,
    });
    const imported = expectData(await importNotesOf(s, [{ id: 1, title: 'With photo', attachments: [image.key] }]));
    // Assess
    expect(image).toMatchObject({ name: 'IMG 0001.jpg', method: 'PUT', headers: { 'content-type': 'image/jpeg' } });
    expect(image.key).toMatch(new RegExp(`^cases/${s.caseId}/notes/[0-9a-f-]{36}-IMG_0001\\.jpg$`));
    // A file name cannot step out of the case's prefix.
    expect(pdf.key).toMatch(new RegExp(`^cases/${s.caseId}/notes/[0-9a-f-]{36}-__\\.\\._secret\\.pdf$`));
    expect(Date.parse(image.expiresAt) - Date.now()).toBeGreaterThan((UPLOAD_LINK_SECONDS - 60) * 1000);
    expect(put.status).toBe(200);
    expect(await objectStorage().size(image.key)).toBe(3);
    expect(imported.importedCount).toBe(1);
    const [note] = await db().select().from(deviceNotes).where(eq(deviceNotes.caseId, s.caseId));
    expect(note!.attachmentKeys).toEqual([image.key]);
  });

  it('refuses an upload with another content type, a changed key or size, more bytes than signed for, or after the link expired', async () => {
    const s = await caseWithOwner();
    const [link] = expectData(await linksFor(s)).uploads;
    // The body's own length goes on the wire (fetch computes it), whatever the link was made for.
    const { 'content-length': _signedLength, ...signedHeaders } = link.headers;
    const put = (url: string, body: Uint8Array, headers: Record<string, string> = signedHeaders) =>
      fetch(onServer(url), { method: 'PUT', headers: uploadHeaders(headers, body), body });
    const otherKey = link.url.replace('/notes/', '/notes/x');
    const biggerSize = link.url.replace('size=3', 'size=30');

    expect((await put(link.url, new Uint8Array(3), { 'content-type': 'text/html' })).status).toBe(403);
    expect((await put(otherKey, new Uint8Array(3))).status).toBe(403);
    expect((await put(biggerSize, new Uint8Array(30))).status).toBe(403);
    expect((await put(link.url, new Uint8Array(4))).status).toBe(413);
    testClock.advance(UPLOAD_LINK_SECONDS + 1);
    expect((await put(link.url, new Uint8Array(3))).status).toBe(403);
    // Nothing stored where the link writes (its staging key), nor as evidence.
    expect(await objectStorage().size(stagingKeyOf(link.key))).toBeNull();
    expect(await objectStorage().size(link.key)).toBeNull();
  });

  it.each([
    [{ files: [] }, 'body.files'],
    [{ files: [{ ...photo, contentType: 'jpeg' }] }, 'body.files.0.contentType'],
    [{ files: [{ ...photo, size: 0 }] }, 'body.files.0.size'],
    [{ files: [{ ...photo, name: '' }] }, 'body.files.0.name'],
    [{ files: Array.from({ length: 101 }, () => photo) }, 'body.files'],
  ])('answers 400 naming the field for %j', async (body, field) => {
    const s = await caseWithOwner();
    expectError(
      await invoke(routes.createAttachmentUploads, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body,
      }),
      400,
      'VALIDATION_FAILED',
      [field],
    );
  });

  it('needs owner or admin access to a case of the header organization, like the import', async () => {
    const s = await caseWithOwner();
    const viewer = await memberWithAccess(s.organizationId, s.caseId, 'viewer');
    const admin = await memberWithAccess(s.organizationId, s.caseId, 'admin');
    const other = await caseWithOwner();
    const ask = (token: string, organization: string) =>
      invoke(routes.createAttachmentUploads, {
        token,
        organization,
        query: { caseId: s.caseId },
        body: { files: [photo] },
      });
    expectError(await ask(viewer.accessToken, s.organizationId), 403, 'INSUFFICIENT_ROLE');
    expectError(await ask(other.owner.accessToken, other.organizationId), 403, 'FORBIDDEN');
    expectError(await ask(other.owner.accessToken, s.organizationId), 403, 'NOT_A_MEMBER');
    expect(expectData(await ask(admin.accessToken, s.organizationId)).uploads).toHaveLength(1);
  });
});

describeSecurity(routes.createAttachmentUploads, {
  request: ({ caseId }) => ({ query: { caseId }, body: { files: [photo] } }),
  succeeds: true,
});
