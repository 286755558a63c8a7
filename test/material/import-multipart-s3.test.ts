import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { evidenceImports } from '../../lib/db/schema';
import { drainLocalImports } from '../../lib/material/imports';
import { useLocalImportRunner } from '../../lib/material/imports/queue';
import { runImport } from '../../lib/material/imports/run';
import { S3Storage, type UploadedPart, useObjectStorage } from '../../lib/storage';
import { expectData, expectError, invoke } from '../harness/invoke';
import { REGION, type S3Emulator, startS3Emulator } from '../harness/s3rver';
import { asOwner, mboxImportBody, mboxMessage, type Setup, sha256 } from './import-flow';
import { caseWithOwner } from '../harness/cases';

/**
 * Issue 29, item 8 on the cloud path: a file uploaded in parts through presigned UploadPart links
 * to the S3 emulator, resumed after a drop, completed at /start and imported. s3rver 3.7 has no
 * ListParts, so there the store lists the parts the emulator acknowledged (their ETags, as S3
 * would list them); S3Storage's own ListParts call is tested against a double that answers S3's XML.
 */

const PART = 64;
const md5Base64 = (body: Uint8Array) => createHash('md5').update(body).digest('base64');

/** S3Storage on the emulator, listing parts from the UploadPart answers (s3rver cannot list them). */
class EmulatedS3Storage extends S3Storage {
  readonly acknowledged = new Map<string, UploadedPart[]>();
  readonly completed = new Set<string>();

  override async listParts(_key: string, uploadId: string): Promise<UploadedPart[] | null> {
    if (this.completed.has(uploadId)) return null;
    return [...(this.acknowledged.get(uploadId) ?? [])].sort((a, b) => a.partNumber - b.partNumber);
  }

  override async completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]) {
    const stored = await super.completeMultipartUpload(key, uploadId, parts);
    this.completed.add(uploadId);
    return stored;
  }
}

describe('a file uploaded in parts to S3 (the emulator)', () => {
  let s3: S3Emulator;
  let storage: EmulatedS3Storage;
  let restoreConfig: () => void;

  beforeAll(async () => {
    s3 = await startS3Emulator();
    restoreConfig = overrideConfig({ IMPORT_MULTIPART_PART_BYTES: PART });
    storage = new EmulatedS3Storage(s3.bucket, s3.config());
    useObjectStorage(storage);
    // The worker in this process, so it reads the emulator through this store.
    useLocalImportRunner((importId) => runImport(importId));
  });

  afterAll(async () => {
    useObjectStorage(undefined);
    restoreConfig?.();
    await s3?.close();
  });

  const FILE = [1, 2, 3].map((n) => mboxMessage(`s3-${n}`, `S3 message ${n}`)).join('');
  const BYTES = Buffer.from(FILE);
  const PART_COUNT = Math.ceil(BYTES.length / PART);
  const partBytes = (n: number) => BYTES.subarray((n - 1) * PART, n * PART);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const pathOf = (s: Setup, importId: string) => ({ caseId: s.caseId, importId });

  /** Signs and PUTs parts as a client does; records each ETag S3 answers (what ListParts would list). */
  async function uploadParts(s: Setup, importId: string, uploadId: string, partNumbers: number[]) {
    const { parts } = expectData(
      await invoke(routes.signImportParts, { ...asOwner(s), path: pathOf(s, importId), body: { partNumbers } }),
    );
    for (const part of parts as { partNumber: number; url: string; headers: Record<string, string> }[]) {
      const url = new URL(part.url);
      expect(url.searchParams.get('uploadId')).toBe(uploadId);
      expect(url.searchParams.get('partNumber')).toBe(String(part.partNumber));
      const body = partBytes(part.partNumber);
      const put = await fetch(part.url, {
        method: 'PUT',
        headers: { ...part.headers, 'content-md5': md5Base64(body) },
        body,
      });
      expect(put.status, await put.text()).toBe(200);
      const list = storage.acknowledged.get(uploadId) ?? [];
      list.push({ partNumber: part.partNumber, sizeBytes: body.length, etag: put.headers.get('etag')! });
      storage.acknowledged.set(uploadId, list);
    }
    return parts as { partNumber: number; url: string }[];
  }

  it('creates the upload in S3, takes parts through presigned links, resumes, completes at start, imports with the right SHA-256', async () => {
    const s = await caseWithOwner();
    const created = expectData(
      await invoke(routes.createImport, {
        ...asOwner(s),
        path: { caseId: s.caseId },
        body: { ...mboxImportBody(FILE), upload: 'multipart' },
      }),
      201,
    );
    expect(created.upload).toMatchObject({ method: 'MULTIPART', partSize: PART, partCount: PART_COUNT });
    const [row] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, created.import.id));
    expect(s3.passed.some((request) => request.startsWith('POST') && request.includes('uploads'))).toBe(true);
    const uploadId = row!.multipartUploadId!;

    const half = Math.floor(PART_COUNT / 2);
    const first = await uploadParts(s, created.import.id, uploadId, range(1, half));
    // A part link signs its length: another body length is refused by S3.
    const short = partBytes(1).subarray(0, 10);
    const refused = await fetch(first[0]!.url, {
      method: 'PUT',
      headers: { 'content-length': '10', 'content-md5': md5Base64(short) },
      body: short,
    });
    expect(refused.status).toBe(403);

    const early = await invoke(routes.startImport, { ...asOwner(s), path: pathOf(s, created.import.id) });
    expectError(early, 409, 'UPLOAD_INCOMPLETE');
    const listed = expectData(
      await invoke(routes.listImportParts, { ...asOwner(s), path: pathOf(s, created.import.id) }),
    );
    expect(listed.parts.map((p: { partNumber: number }) => p.partNumber)).toEqual(range(1, half));

    await uploadParts(s, created.import.id, uploadId, range(half + 1, PART_COUNT));
    expectData(await invoke(routes.startImport, { ...asOwner(s), path: pathOf(s, created.import.id) }), 202);
    await drainLocalImports();
    const done = expectData(await invoke(routes.getImport, { ...asOwner(s), path: pathOf(s, created.import.id) }));
    expect(done).toMatchObject({ status: 'succeeded', sha256: sha256(FILE), progress: { itemsImported: 3 } });
    expect(s3.passed.some((request) => request.startsWith('POST') && request.includes('uploadId'))).toBe(true);
  });

  it('cancel aborts the upload in S3', async () => {
    const s = await caseWithOwner();
    const created = expectData(
      await invoke(routes.createImport, {
        ...asOwner(s),
        path: { caseId: s.caseId },
        body: { ...mboxImportBody(FILE), upload: 'multipart' },
      }),
      201,
    );
    const before = s3.passed.length;
    expectData(await invoke(routes.cancelImport, { ...asOwner(s), path: pathOf(s, created.import.id) }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(
      s3.passed.slice(before).some((request) => request.startsWith('DELETE') && request.includes('uploadId')),
    ).toBe(true);
  });
});

/** Answers ListParts as S3 does: two pages (IsTruncated, NextPartNumberMarker), NoSuchUpload for another upload. */
function listPartsDouble(asked: string[]): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    asked.push(`${req.method} ${url.pathname}?${url.searchParams.toString()}`);
    if (url.searchParams.get('uploadId') !== 'up-1') {
      res.writeHead(404, { 'content-type': 'application/xml' });
      res.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code><Message>No such upload</Message></Error>',
      );
      return;
    }
    const second = url.searchParams.get('part-number-marker') === '2';
    const part = (n: number, size: number) =>
      `<Part><PartNumber>${n}</PartNumber><LastModified>2026-11-27T00:00:00.000Z</LastModified><ETag>"etag-${n}"</ETag><Size>${size}</Size></Part>`;
    res.writeHead(200, { 'content-type': 'application/xml' });
    res.end(
      `<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Bucket>work</Bucket><Key>k</Key><UploadId>up-1</UploadId>${
        second
          ? `<PartNumberMarker>2</PartNumberMarker><IsTruncated>false</IsTruncated>${part(3, 5)}`
          : `<PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>2</NextPartNumberMarker><IsTruncated>true</IsTruncated>${part(2, 64)}${part(1, 64)}`
      }</ListPartsResult>`,
    );
  });
}

describe("S3Storage's ListParts (a double answering S3's XML)", () => {
  let double: Server;
  const asked: string[] = [];
  let storage: S3Storage;

  beforeAll(async () => {
    double = listPartsDouble(asked);
    await new Promise<void>((resolve) => double.listen(0, '127.0.0.1', resolve));
    storage = new S3Storage('work', {
      endpoint: `http://127.0.0.1:${(double.address() as AddressInfo).port}`,
      forcePathStyle: true,
      region: REGION,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
  });

  afterAll(() => new Promise<void>((resolve) => double.close(() => resolve())));

  it('lists every page of parts in order, and null for an upload S3 does not know', async () => {
    expect(await storage.listParts('staging/cases/c/imports/x', 'up-1')).toEqual([
      { partNumber: 1, sizeBytes: 64, etag: '"etag-1"' },
      { partNumber: 2, sizeBytes: 64, etag: '"etag-2"' },
      { partNumber: 3, sizeBytes: 5, etag: '"etag-3"' },
    ]);
    expect(asked).toHaveLength(2);
    expect(asked[1]).toContain('part-number-marker=2');
    expect(await storage.listParts('staging/cases/c/imports/x', 'gone')).toBeNull();
  });
});
