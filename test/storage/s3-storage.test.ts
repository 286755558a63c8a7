import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalServer, listen } from '../../infra/local/app';
import { overrideConfig } from '../../lib/config';
import { LocalMailSink } from '../../lib/mail/transport';
import { objectStorage, S3Storage, useObjectStorage } from '../../lib/storage';
import { type S3Emulator, startS3Emulator } from '../harness/s3rver';

/**
 * The cloud storage path (lib/storage S3Storage) against the s3rver emulator behind a proxy that
 * checks presigned requests as S3 does (test/harness/s3rver.ts): object writes, streamed and
 * multipart uploads, range reads, HeadObject sizes, presigned PUT and GET links. The bucket is under
 * S3 Object Lock in the cloud, which refuses any write without Content-MD5 or an x-amz checksum:
 * server-side writes carry a CRC32, clients add Content-MD5 to presigned uploads, and the local
 * upload route checks that header as S3 does.
 */

let s3: S3Emulator;

beforeAll(async () => {
  s3 = await startS3Emulator();
});

afterAll(async () => {
  await s3?.close();
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const md5Base64 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('base64');

async function bytesOf(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error('no object');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const put = (url: string, body: Uint8Array, headers: Record<string, string>) =>
  fetch(url, { method: 'PUT', headers, body });

/** The requests the proxy passed on since `from` that write object data (PutObject, CreateMultipartUpload, UploadPart). */
const writesSince = (from: number) =>
  s3.requests
    .slice(from)
    .filter(
      (request) =>
        (request.method === 'PUT' && !request.query.includes('X-Amz-Algorithm')) ||
        (request.method === 'POST' && request.query.includes('uploads')),
    );

describe('S3Storage against the S3 emulator', () => {
  it('signs upload links over the length and type: exactly the declared bytes are stored, a larger or smaller body or another type is refused', async () => {
    // Prepare
    const storage = new S3Storage(s3.bucket, s3.config());
    const key = `cases/${randomBytes(4).toString('hex')}/imports/mailbox.mbox`;
    const body = randomBytes(2048);
    const url = await storage.uploadUrl(key, { contentType: 'application/mbox', size: body.length }, 900);
    const headers = { 'content-type': 'application/mbox', 'content-length': String(body.length) };
    const before = s3.refused.length;

    // Act
    const larger = await put(url, randomBytes(body.length + 1), {
      ...headers,
      'content-length': String(body.length + 1),
    });
    const smaller = await put(url, body.subarray(1), { ...headers, 'content-length': String(body.length - 1) });
    const otherType = await put(url, body, { ...headers, 'content-type': 'text/html' });
    const sizeAfterRefusals = await storage.size(key);
    const stored = await put(url, body, headers);

    // Assess
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')?.split(';').sort()).toEqual([
      'content-length',
      'content-type',
      'host',
    ]);
    expect([larger.status, smaller.status, otherType.status]).toEqual([403, 403, 403]);
    expect(s3.refused.slice(before)).toEqual(Array(3).fill(expect.stringMatching(/^SignatureDoesNotMatch/)));
    expect(sizeAfterRefusals).toBeNull();
    expect(stored.status).toBe(200);
    const head = await new S3Client(s3.config()).send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key }));
    expect(head.ContentLength).toBe(body.length);
    expect(head.ContentType).toBe('application/mbox');
    expect(await storage.size(key)).toBe(body.length);
    expect(sha256(await bytesOf(await storage.read(key)))).toBe(sha256(body));
  });

  it('signs upload links without the empty-body checksum the default client bakes in (S3 would refuse every upload)', async () => {
    // Prepare: the SDK's default checksum settings, as in the cloud
    const { requestChecksumCalculation: _request, responseChecksumValidation: _response, ...defaults } = s3.config();
    const storage = new S3Storage(s3.bucket, defaults);
    const key = `cases/${randomBytes(4).toString('hex')}/notes/photo.jpg`;
    const body = randomBytes(100);

    // Act
    const url = await storage.uploadUrl(key, { contentType: 'image/jpeg', size: body.length }, 900);
    const stored = await put(url, body, { 'content-type': 'image/jpeg', 'content-length': String(body.length) });

    // Assess
    expect([...new URL(url).searchParams.keys()].filter((name) => /checksum/i.test(name))).toEqual([]);
    expect(stored.status).toBe(200);
    expect(await storage.size(key)).toBe(body.length);
  });

  it('refuses a tampered or expired link (the proxy checks what S3 checks)', async () => {
    const storage = new S3Storage(s3.bucket, s3.config());
    const key = `cases/${randomBytes(4).toString('hex')}/imports/x.csv`;
    const headers = { 'content-type': 'text/csv', 'content-length': '3' };
    const url = new URL(await storage.uploadUrl(key, { contentType: 'text/csv', size: 3 }, 900));
    const otherKey = new URL(url);
    otherKey.pathname = otherKey.pathname.replace('x.csv', 'y.csv');
    const expired = new URL(url);
    expired.searchParams.set('X-Amz-Date', '20200101T000000Z');

    expect((await put(otherKey.toString(), new Uint8Array(3), headers)).status).toBe(403);
    expect((await put(expired.toString(), new Uint8Array(3), headers)).status).toBe(403);
    expect(await storage.size(key)).toBeNull();
  });

  it('reads an object from a byte offset (a resumed import), to an empty stream at or past its end', async () => {
    // Prepare
    const storage = new S3Storage(s3.bucket, s3.config());
    const key = `cases/${randomBytes(4).toString('hex')}/imports/range.bin`;
    const body = randomBytes(10_000);
    await storage.put(key, body, 'application/octet-stream');

    // Act
    const whole = await bytesOf(await storage.read(key));
    const tail = await bytesOf(await storage.read(key, { start: 7_500 }));
    const atEnd = await bytesOf(await storage.read(key, { start: body.length }));
    const pastEnd = await bytesOf(await storage.read(key, { start: body.length + 100 }));

    // Assess
    expect(whole.equals(body)).toBe(true);
    expect(tail.equals(body.subarray(7_500))).toBe(true);
    expect(atEnd.length).toBe(0);
    expect(pastEnd.length).toBe(0);
    expect(await storage.read(`${key}.missing`)).toBeNull();
    expect(await storage.read(`${key}.missing`, { start: 10 })).toBeNull();
    expect(await storage.size(`${key}.missing`)).toBeNull();
    await expect(storage.read(key, { start: -1 })).rejects.toThrow(/offset/);
  });

  it('streams an object of unknown length in: one PUT when small, a multipart upload above the part size', async () => {
    // Prepare: 9 MiB is two parts of the 8 MiB part size; generated in chunks, never whole in the stream
    const storage = new S3Storage(s3.bucket, s3.config());
    const prefix = `cases/${randomBytes(4).toString('hex')}/attachments/`;
    const small = randomBytes(1000);
    const chunks = Array.from({ length: 9 }, () => randomBytes(1024 * 1024));
    const large = Buffer.concat(chunks);

    // Act
    await storage.putStream(`${prefix}small.txt`, Readable.from([small]), 'text/plain');
    const from = s3.passed.length;
    await storage.putStream(`${prefix}large.bin`, Readable.from(chunks), 'application/octet-stream');
    const largeRequests = s3.passed.slice(from);

    // Assess
    expect((await bytesOf(await storage.read(`${prefix}small.txt`))).equals(small)).toBe(true);
    expect(await storage.size(`${prefix}large.bin`)).toBe(large.length);
    expect(sha256(await bytesOf(await storage.read(`${prefix}large.bin`)))).toBe(sha256(large));
    const head = await new S3Client(s3.config()).send(
      new HeadObjectCommand({ Bucket: s3.bucket, Key: `${prefix}large.bin` }),
    );
    expect(head.ContentType).toBe('application/octet-stream');
    // Create, two parts, complete.
    const path = `/${s3.bucket}/${prefix}large.bin`;
    expect(largeRequests.map((line) => line.replace(/=[^&]*/g, ''))).toEqual([
      `POST ${path}?uploads`,
      ...Array(2).fill(`PUT ${path}?partNumber&uploadId&x-id`),
      `POST ${path}?uploadId`,
    ]);
  });

  it('gives download links that fetch the object without credentials', async () => {
    const storage = new S3Storage(s3.bucket, s3.config());
    const key = `cases/${randomBytes(4).toString('hex')}/custody.pdf`;
    await storage.put(key, new Uint8Array([37, 80, 68, 70]), 'application/pdf');

    const answer = await fetch(await storage.downloadUrl(key, 60));

    expect(answer.status).toBe(200);
    expect(Buffer.from(await answer.arrayBuffer())).toEqual(Buffer.from([37, 80, 68, 70]));
  });
});

describe('S3Storage writes under Object Lock', () => {
  it.each([
    ['checksums only where required (the emulator setting)', {}],
    [
      'the SDK default, checksums whenever supported (the cloud)',
      { requestChecksumCalculation: 'WHEN_SUPPORTED' as const },
    ],
  ])('sends a CRC32 checksum header with every server-side write: %s', async (_name, overrides) => {
    // Prepare
    const storage = new S3Storage(s3.bucket, s3.config(overrides));
    const prefix = `cases/${randomBytes(4).toString('hex')}/`;
    const small = randomBytes(3000);
    const parts = Array.from({ length: 9 }, () => randomBytes(1024 * 1024));
    const from = s3.requests.length;

    // Act
    await storage.put(`${prefix}put.bin`, small, 'application/octet-stream');
    await storage.putStream(`${prefix}stream-small.bin`, Readable.from([small]), 'application/octet-stream');
    await storage.putStream(`${prefix}stream-large.bin`, Readable.from(parts), 'application/octet-stream');
    const writes = writesSince(from);

    // Assess: PutObject x2, CreateMultipartUpload, UploadPart x2
    expect(writes.map((write) => `${write.method} ${write.query.filter((name) => name !== 'x-id').join('&')}`)).toEqual(
      ['PUT ', 'PUT ', 'POST uploads', 'PUT partNumber&uploadId', 'PUT partNumber&uploadId'],
    );
    for (const write of writes)
      expect(write.headers['x-amz-sdk-checksum-algorithm'] ?? write.headers['x-amz-checksum-algorithm']).toBe('CRC32');
    // The data requests carry the checksum itself as a header (never an aws-chunked trailer,
    // which the emulator would store inside the object).
    for (const write of writes.filter((request) => request.method === 'PUT')) {
      expect(write.headers['x-amz-checksum-crc32']).toMatch(/^[A-Za-z0-9+/]{6}==$/);
      expect(write.headers['content-encoding'] ?? '').not.toContain('aws-chunked');
    }
    expect((await bytesOf(await storage.read(`${prefix}put.bin`))).equals(small)).toBe(true);
    expect((await bytesOf(await storage.read(`${prefix}stream-small.bin`))).equals(small)).toBe(true);
    expect(sha256(await bytesOf(await storage.read(`${prefix}stream-large.bin`)))).toBe(sha256(Buffer.concat(parts)));
  });

  it('takes a presigned upload with the Content-MD5 the client adds (unsigned, as S3 allows), and refuses a body that does not match it', async () => {
    // Prepare
    const storage = new S3Storage(s3.bucket, s3.config());
    const key = `cases/${randomBytes(4).toString('hex')}/notes/photo.jpg`;
    const body = randomBytes(512);
    const url = await storage.uploadUrl(key, { contentType: 'image/jpeg', size: body.length }, 900);
    const headers = { 'content-type': 'image/jpeg', 'content-length': String(body.length) };

    // Act
    const mismatch = await put(url, body, { ...headers, 'content-md5': md5Base64(randomBytes(512)) });
    const afterMismatch = await storage.size(key);
    const stored = await put(url, body, { ...headers, 'content-md5': md5Base64(body) });

    // Assess
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).not.toContain('content-md5');
    expect(mismatch.status).toBe(400);
    expect(await mismatch.text()).toContain('BadDigest');
    expect(afterMismatch).toBeNull();
    expect(stored.status).toBe(200);
    expect(await storage.size(key)).toBe(body.length);
  });

  it('answers HeadObject sizes: an empty object is 0 bytes, a missing one is null', async () => {
    const storage = new S3Storage(s3.bucket, s3.config());
    const prefix = `reports/${randomBytes(4).toString('hex')}/`;
    await storage.put(`${prefix}empty.pdf`, new Uint8Array(0), 'application/pdf');
    await storage.put(`${prefix}report.pdf`, randomBytes(12_345), 'application/pdf');

    expect(await storage.size(`${prefix}empty.pdf`)).toBe(0);
    expect(await storage.size(`${prefix}report.pdf`)).toBe(12_345);
    expect(await storage.size(`${prefix}missing.pdf`)).toBeNull();
  });
});

describe('the local upload route checks Content-MD5 as S3 does', () => {
  let server: Server;
  let base: string;
  let dataDir: string;
  let restoreConfig: () => void;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cebs-local-uploads-'));
    restoreConfig = overrideConfig({
      DATA_DIR: dataDir,
      STORAGE_BUCKET: undefined,
      PUBLIC_BASE_URL: 'http://localhost:3000',
    });
    useObjectStorage(undefined);
    server = createLocalServer({ mailSink: new LocalMailSink() });
    base = await listen(server, 0);
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    restoreConfig?.();
    useObjectStorage(undefined);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** An upload link of the directory store, pointed at this test's server. */
  const uploadLink = async (key: string, contentType: string, size: number) => {
    const url = new URL(await objectStorage().uploadUrl(key, { contentType, size }, 600));
    return `${base}${url.pathname}${url.search}`;
  };

  it.each([
    ['no Content-MD5 (required, as S3 requires it of an upload under Object Lock)', () => undefined, 400],
    ['the MD5 of the body', (body: Buffer) => md5Base64(body), 200],
    ['the MD5 of another body (S3: 400 BadDigest)', () => md5Base64(Buffer.from('something else')), 400],
    ['a value that is no MD5 (S3: 400 InvalidDigest)', () => 'not-an-md5', 400],
    ['a hex MD5 instead of base64', (body: Buffer) => createHash('md5').update(body).digest('hex'), 400],
  ])('PUT with %s', async (_name, contentMd5, status) => {
    // Prepare
    const key = `cases/local/${randomBytes(4).toString('hex')}/export.csv`;
    const body = Buffer.from('a,b\n1,2\n');
    const url = await uploadLink(key, 'text/csv', body.length);
    const md5 = contentMd5(body);

    // Act
    const answer = await put(url, body, {
      'content-type': 'text/csv',
      'content-length': String(body.length),
      ...(md5 === undefined ? {} : { 'content-md5': md5 }),
    });

    // Assess
    expect(answer.status, await answer.text()).toBe(status);
    expect(await objectStorage().size(key)).toBe(status === 200 ? body.length : null);
    if (status !== 200) {
      // Nothing left behind: no object, no temporary file.
      const folder = join(dataDir, 'objects', ...key.split('/').slice(0, -1));
      expect(existsSync(folder) ? readdirSync(folder) : []).toEqual([]);
    }
  });
});
