import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoSuchUploadError, S3Storage } from '../../lib/storage';
import { REGION } from '../harness/s3rver';

/**
 * S3Storage's part of the worker's segmented copy into evidence (lib/material/imports/evidence-copy.ts)
 * against a double answering S3's XML, since s3rver 3.7 has no UploadPartCopy: each segment is an
 * UploadPartCopy of a byte range of the pinned staged version (by VersionId, or If-Match on the
 * ETag in the unversioned work bucket), and completing the upload gives the version written.
 */

interface Asked {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
}

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>${body}`;
const s3Error = (code: string) => xml(`<Error><Code>${code}</Code><Message>${code}</Message></Error>`);

function copyDouble(asked: Asked[]): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://double');
    asked.push({
      method: req.method ?? '',
      path: decodeURIComponent(url.pathname),
      query: url.searchParams,
      headers: req.headers,
    });
    req.resume();
    req.on('end', () => {
      const uploadId = url.searchParams.get('uploadId');
      if (uploadId === 'gone') {
        res.writeHead(404, { 'content-type': 'application/xml' });
        res.end(s3Error('NoSuchUpload'));
        return;
      }
      if (req.method === 'PUT' && req.headers['x-amz-copy-source']) {
        const source = String(req.headers['x-amz-copy-source']);
        if (req.headers['x-amz-copy-source-if-match'] === '"stale"') {
          res.writeHead(412, { 'content-type': 'application/xml' });
          res.end(s3Error('PreconditionFailed'));
          return;
        }
        if (source.includes('versionId=missing')) {
          res.writeHead(404, { 'content-type': 'application/xml' });
          res.end(s3Error('NoSuchVersion'));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/xml' });
        res.end(
          xml(
            `<CopyPartResult><LastModified>2026-11-27T00:00:00.000Z</LastModified><ETag>"part-${url.searchParams.get('partNumber')}"</ETag></CopyPartResult>`,
          ),
        );
        return;
      }
      if (req.method === 'POST' && uploadId) {
        res.writeHead(200, { 'content-type': 'application/xml', 'x-amz-version-id': 'evidence-v1' });
        res.end(
          xml(
            '<CompleteMultipartUploadResult><Location>l</Location><Bucket>evidence</Bucket><Key>k</Key><ETag>"whole-2"</ETag></CompleteMultipartUploadResult>',
          ),
        );
        return;
      }
      res.writeHead(400, { 'content-type': 'application/xml' });
      res.end(s3Error('InvalidRequest'));
    });
  });
}

describe("S3Storage's UploadPartCopy and completion (a double answering S3's XML)", () => {
  let double: Server;
  const asked: Asked[] = [];
  let storage: S3Storage;
  const target = (partNumber: number, uploadId = 'up-1') => ({
    key: 'cases/c/imports/x.mbox',
    uploadId,
    partNumber,
  });

  beforeAll(async () => {
    double = copyDouble(asked);
    await new Promise<void>((resolve) => double.listen(0, '127.0.0.1', resolve));
    storage = new S3Storage(
      { evidence: 'evidence', work: 'work' },
      {
        endpoint: `http://127.0.0.1:${(double.address() as AddressInfo).port}`,
        forcePathStyle: true,
        region: REGION,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      },
    );
  });

  afterAll(() => new Promise<void>((resolve) => double.close(() => resolve())));

  it('copies a byte range of the ETag-pinned staged upload into a part of the evidence upload, server-side', async () => {
    asked.length = 0;
    const part = await storage.copyPart(
      { key: 'staging/cases/c/imports/x.mbox', version: 'etag:"abc"' },
      { start: 100, end: 200 },
      target(2),
    );

    expect(part).toEqual({ partNumber: 2, sizeBytes: 100, etag: '"part-2"' });
    const [request] = asked;
    expect(request).toMatchObject({ method: 'PUT', path: '/evidence/cases/c/imports/x.mbox' });
    expect(request!.query.get('uploadId')).toBe('up-1');
    expect(request!.query.get('partNumber')).toBe('2');
    expect(request!.headers['x-amz-copy-source']).toBe('work/staging/cases/c/imports/x.mbox');
    expect(request!.headers['x-amz-copy-source-if-match']).toBe('"abc"');
    // Inclusive, as HTTP ranges are: bytes 100 to 199.
    expect(request!.headers['x-amz-copy-source-range']).toBe('bytes=100-199');
  });

  it('pins a versioned source by its VersionId', async () => {
    asked.length = 0;
    await storage.copyPart({ key: 'staging/k', version: 'id:v7' }, { start: 0, end: 10 }, target(1));

    expect(asked[0]!.headers['x-amz-copy-source']).toBe('work/staging/k?versionId=v7');
    expect(asked[0]!.headers['x-amz-copy-source-if-match']).toBeUndefined();
  });

  it('null when the source is no longer that version; NoSuchUploadError when the upload is gone', async () => {
    expect(
      await storage.copyPart({ key: 'staging/k', version: 'etag:"stale"' }, { start: 0, end: 10 }, target(1)),
    ).toBeNull();
    expect(
      await storage.copyPart({ key: 'staging/k', version: 'id:missing' }, { start: 0, end: 10 }, target(1)),
    ).toBeNull();
    await expect(
      storage.copyPart({ key: 'staging/k', version: 'etag:"abc"' }, { start: 0, end: 10 }, target(1, 'gone')),
    ).rejects.toBeInstanceOf(NoSuchUploadError);
  });

  it('completing the upload gives the evidence version written', async () => {
    asked.length = 0;
    const stored = await storage.completeMultipartUpload('cases/c/imports/x.mbox', 'up-1', [
      { partNumber: 1, sizeBytes: 100, etag: '"part-1"' },
      { partNumber: 2, sizeBytes: 5, etag: '"part-2"' },
    ]);

    expect(stored).toEqual({ version: 'id:evidence-v1' });
    expect(asked[0]).toMatchObject({ method: 'POST', path: '/evidence/cases/c/imports/x.mbox' });
  });

  it('reads a segment: an inclusive HTTP range of [start, end)', async () => {
    asked.length = 0;
    await storage.read('cases/c/imports/x.mbox', { start: 100, end: 200, version: 'id:evidence-v1' }).catch(() => null);

    expect(asked[0]!.headers.range).toBe('bytes=100-199');
    expect(asked[0]!.query.get('versionId')).toBe('evidence-v1');
  });
});
