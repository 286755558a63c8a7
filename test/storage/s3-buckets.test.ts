import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { CreateBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { overrideConfig } from '../../lib/config';
import {
  caseStagingPrefix,
  casePrefix,
  GENERATED_PREFIX,
  objectStorage,
  S3Storage,
  useObjectStorage,
} from '../../lib/storage';
import { REGION, type S3Emulator, startS3Emulator } from '../harness/s3rver';

/**
 * The cloud keeps evidence and work apart (infra/constructs/object-store.ts): staging uploads and
 * generated documents in a work bucket without Object Lock, everything else in the evidence bucket,
 * whose Object Lock default retention would keep them for good. S3Storage sends each key to its
 * bucket in every operation; here against the emulator with two buckets.
 */

let s3: S3Emulator;
const WORK_BUCKET = 'case-evidence-test-work';

beforeAll(async () => {
  s3 = await startS3Emulator();
  await new S3Client(s3.config()).send(new CreateBucketCommand({ Bucket: WORK_BUCKET }));
});

afterAll(async () => {
  await s3?.close();
});

async function bytesOf(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error('no object');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Whether `bucket` holds `key`, asked of the emulator directly. */
async function holds(bucket: string, key: string): Promise<boolean> {
  try {
    await new S3Client(s3.config()).send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (error) {
    if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
    throw error;
  }
}

/** The buckets the requests passed on since `from` addressed (path style: /<bucket>/<key>). */
const bucketsSince = (from: number) => [...new Set(s3.requests.slice(from).map((r) => r.path.split('/')[1]))];

const id = () => randomBytes(4).toString('hex');

describe('S3Storage with an evidence bucket and a work bucket', () => {
  const cases = [
    ['a staging upload', 'work', () => `${caseStagingPrefix(id())}imports/${id()}-mailbox.mbox`],
    ['a generated document', 'work', () => `${GENERATED_PREFIX}${id()}/custody/${id()}.pdf`],
    ['evidence', 'evidence', () => `${casePrefix(id())}attachments/${id()}/photo.jpg`],
  ] as const;

  it.each(cases)('sends every operation on %s to the %s bucket', async (_name, expected, keyOf) => {
    // Prepare
    const storage = new S3Storage({ evidence: s3.bucket, work: WORK_BUCKET }, s3.config());
    const bucket = expected === 'work' ? WORK_BUCKET : s3.bucket;
    const other = expected === 'work' ? s3.bucket : WORK_BUCKET;
    const [putKey, streamKey, linkKey] = [keyOf(), keyOf(), keyOf()];
    const body = randomBytes(1000);
    // Two parts of the 8 MiB part size: a multipart upload.
    const parts = Array.from({ length: 9 }, () => randomBytes(1024 * 1024));
    const from = s3.requests.length;

    // Act
    await storage.put(putKey, body, 'application/octet-stream');
    await storage.putStream(streamKey, Readable.from(parts), 'application/octet-stream');
    const uploadUrl = await storage.uploadUrl(
      linkKey,
      { contentType: 'application/octet-stream', size: body.length },
      600,
    );
    const uploaded = await fetch(uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(body.length) },
      body,
    });
    const downloadUrl = await storage.downloadUrl(putKey, 600);
    const downloaded = await fetch(downloadUrl);
    const sizes = [await storage.size(putKey), await storage.size(streamKey), await storage.size(linkKey)];
    const read = await bytesOf(await storage.read(putKey, { start: 10 }));
    const heldBeforeDelete = await holds(bucket, putKey);
    await storage.delete(putKey);
    const addressed = bucketsSince(from);

    // Assess
    expect(uploaded.status).toBe(200);
    expect(new URL(uploadUrl).pathname.split('/')[1]).toBe(bucket);
    expect(new URL(downloadUrl).pathname.split('/')[1]).toBe(bucket);
    expect(Buffer.from(await downloaded.arrayBuffer()).equals(body)).toBe(true);
    expect(sizes).toEqual([body.length, 9 * 1024 * 1024, body.length]);
    expect(read.equals(body.subarray(10))).toBe(true);
    expect(heldBeforeDelete).toBe(true);
    expect(await holds(bucket, putKey)).toBe(false);
    for (const key of [streamKey, linkKey]) {
      expect(await holds(bucket, key)).toBe(true);
      expect(await holds(other, key)).toBe(false);
    }
    // Not one request of any operation (the link's PUT and GET included) went to the other bucket.
    expect(addressed).toEqual([bucket]);
  });

  it('keeps one bucket for every key when given one (an emulator with a single bucket)', async () => {
    const storage = new S3Storage(s3.bucket, s3.config());
    const key = `${caseStagingPrefix(id())}notes/${id()}-photo.jpg`;

    await storage.put(key, randomBytes(10), 'image/jpeg');

    expect(await holds(s3.bucket, key)).toBe(true);
    expect(await holds(WORK_BUCKET, key)).toBe(false);
  });
});

describe('objectStorage() in the cloud', () => {
  const saved = { ...process.env };
  let restoreConfig: (() => void) | undefined;

  beforeAll(() => {
    // Presigning needs credentials and a region, as in Lambda: from the environment. No request is made.
    Object.assign(process.env, { AWS_REGION: REGION, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' });
  });

  afterAll(() => {
    restoreConfig?.();
    useObjectStorage(undefined);
    for (const name of ['AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'])
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
  });

  it('takes the evidence bucket from STORAGE_BUCKET and the work bucket from WORK_BUCKET', async () => {
    restoreConfig = overrideConfig({ STORAGE_BUCKET: 'evidence-bucket', WORK_BUCKET: 'work-bucket' });
    useObjectStorage(undefined);

    const storage = objectStorage();
    const hostOf = async (key: string) => new URL(await storage.downloadUrl(key, 60)).hostname;

    expect(storage).toBeInstanceOf(S3Storage);
    expect(await hostOf(`${caseStagingPrefix('c1')}imports/i1-mailbox.mbox`)).toMatch(/^work-bucket\./);
    expect(await hostOf(`${GENERATED_PREFIX}o1/report.pdf`)).toMatch(/^work-bucket\./);
    expect(await hostOf(`${casePrefix('c1')}imports/i1-mailbox.mbox`)).toMatch(/^evidence-bucket\./);
    restoreConfig();
    restoreConfig = undefined;
  });

  it('refuses STORAGE_BUCKET without WORK_BUCKET: staging and generated objects would fall under Object Lock for good', () => {
    restoreConfig = overrideConfig({ STORAGE_BUCKET: 'evidence-bucket', WORK_BUCKET: undefined });
    useObjectStorage(undefined);

    expect(() => objectStorage()).toThrow(/WORK_BUCKET/);
    restoreConfig();
    restoreConfig = undefined;
  });
});
