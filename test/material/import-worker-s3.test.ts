import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Context, SQSEvent } from 'aws-lambda';
import { UploadPartCommand } from '@aws-sdk/client-s3';
import { eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { handler as importWorker } from '../../infra/functions/import-worker';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { emails, emailTags, evidenceImportSegments, evidenceImports, evidenceObjects, tags } from '../../lib/db/schema';
import { DirectoryStorage, type ReadOptions, S3Storage, type UploadedPart, useObjectStorage } from '../../lib/storage';
import { expectData, invoke } from '../harness/invoke';
import { REGION, type S3Emulator, startS3Emulator } from '../harness/s3rver';
import { custodyLimits } from '../../lib/material/custody';
import { caseWithOwner } from '../harness/cases';
import { seedThread } from '../harness/material';
import { sqsDouble } from '../harness/sqs-double';

/**
 * The import worker on the cloud path: S3Storage against the S3 emulator (test/harness/s3rver.ts;
 * S3Storage itself is tested in test/storage/s3-storage.test.ts) and a stand-in for SQS. Plus the
 * directory store's streaming operations the worker relies on locally.
 */

let s3: S3Emulator;

beforeAll(async () => {
  s3 = await startS3Emulator();
});

afterAll(async () => {
  await s3?.close();
});

const md5Base64 = (body: string | Uint8Array) => createHash('md5').update(body).digest('base64');

async function bytesOf(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error('no object');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe('DirectoryStorage, the same operations locally', () => {
  let root: string;
  let storage: DirectoryStorage;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'cebs-objects-'));
    storage = new DirectoryStorage(root, 'directory-storage-test-secret');
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('reads from a byte offset and streams objects in through a temporary file', async () => {
    const body = randomBytes(5000);
    await storage.putStream('cases/c1/imports/a.bin', Readable.from([body.subarray(0, 2000), body.subarray(2000)]));

    expect(
      (await bytesOf(await storage.read('cases/c1/imports/a.bin', { start: 4000 }))).equals(body.subarray(4000)),
    ).toBe(true);
    expect((await bytesOf(await storage.read('cases/c1/imports/a.bin', { start: 6000 }))).length).toBe(0);
    expect(await storage.read('cases/c1/imports/none.bin', { start: 1 })).toBeNull();
    await expect(storage.read('cases/c1/imports/a.bin', { start: 1.5 })).rejects.toThrow(/offset/);
  });

  it('leaves nothing behind when the stream fails, and keeps the object it would have replaced', async () => {
    const key = 'cases/c2/attachments/kept.txt';
    await storage.put(key, Buffer.from('original'));
    const failing = new Readable({
      read() {
        this.push(Buffer.from('partial'));
        this.destroy(new Error('connection reset'));
      },
    });

    await expect(storage.putStream(key, failing)).rejects.toThrow('connection reset');

    expect((await bytesOf(await storage.read(key))).toString()).toBe('original');
    expect(readdirSync(join(root, 'cases', 'c2', 'attachments'))).toEqual(['kept.txt']);
  });

  it('stores a signed upload by streaming, refusing a body over the signed size without storing any of it', async () => {
    const key = 'cases/c3/imports/export.csv';
    const url = new URL(await storage.uploadUrl(key, { contentType: 'text/csv', size: 8 }, 600));
    const link = {
      expires: Number(url.searchParams.get('expires')),
      size: Number(url.searchParams.get('size')),
      signature: url.searchParams.get('signature') ?? '',
      contentType: 'text/csv',
      contentMd5: md5Base64('a,b\n1,2\n'),
    };

    const tooLarge = await storage.writeSignedStream(key, link, Readable.from([Buffer.alloc(6), Buffer.alloc(6)]));
    const otherType = await storage.writeSignedStream(key, { ...link, contentType: 'text/html' }, Readable.from([]));
    const stored = await storage.writeSignedStream(key, link, Readable.from([Buffer.from('a,b\n1,2\n')]));

    expect([tooLarge, otherType, stored]).toEqual(['too-large', 'forbidden', 'stored']);
    expect((await bytesOf(await storage.read(key))).toString()).toBe('a,b\n1,2\n');
  });
});

/** The event Lambda's SQS event source hands the worker: one record per message. */
const sqsEvent = (messages: Array<{ messageId: string; body: string }>): SQSEvent => ({
  Records: messages.map(({ messageId, body }) => ({
    messageId,
    receiptHandle: `handle-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: createHash('md5').update(body).digest('hex'),
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:imports',
    awsRegion: REGION,
  })),
});

/** A Lambda context whose remaining time the test sets: 15 minutes unless told otherwise. */
const lambdaContext = (remainingMs: () => number = () => 15 * 60_000): Context =>
  ({
    awsRequestId: randomUUID(),
    functionName: 'importWorker',
    getRemainingTimeInMillis: remainingMs,
  }) as unknown as Context;

/**
 * S3Storage on the emulator with UploadPartCopy stood in for (s3rver answers it NotImplemented):
 * the range of the pinned source is read and uploaded as the part, which is what S3 does inside
 * itself. S3Storage's own UploadPartCopy request is tested against a double (test/storage/s3-copy-part.test.ts).
 */
class PartCopyingS3Storage extends S3Storage {
  readonly copies: Array<{ partNumber: number; start: number; end: number }> = [];

  constructor(private readonly emulator: S3Emulator) {
    super(emulator.bucket, emulator.config());
  }

  override async copyPart(
    source: { key: string; version: string },
    range: { start: number; end: number },
    target: { key: string; uploadId: string; partNumber: number },
  ): Promise<UploadedPart | null> {
    const body = await this.read(source.key, { version: source.version, ...range } satisfies ReadOptions);
    if (!body) return null;
    const bytes = await bytesOf(body);
    const { S3Client } = await import('@aws-sdk/client-s3');
    const client = new S3Client(this.emulator.config());
    const { ETag } = await client.send(
      new UploadPartCommand({
        Bucket: this.emulator.bucket,
        Key: target.key,
        UploadId: target.uploadId,
        PartNumber: target.partNumber,
        Body: bytes,
        ContentMD5: md5Base64(bytes),
      }),
    );
    this.copies.push({ partNumber: target.partNumber, ...range });
    return { partNumber: target.partNumber, sizeBytes: bytes.length, etag: ETag! };
  }
}

const mboxMessage = (id: string, subject: string) =>
  `From sender@example Mon Nov  2 10:00:00 2026\nMessage-ID: <${id}@lee-law.example>\nDate: Mon, 02 Nov 2026 10:00:00 +0000\nFrom: Ann Lee <ann@lee-law.example>\nTo: Bob Roe <bob@roe.example>\nSubject: ${subject}\n\n${subject} body.\n\n`;

const mboxWithAttachment = (id: string, bytes: number) =>
  `From sender@example Mon Nov  2 10:00:00 2026\nMessage-ID: <${id}@lee-law.example>\nDate: Mon, 02 Nov 2026 11:00:00 +0000\nFrom: ann@lee-law.example\nTo: bob@roe.example\nSubject: ${id}\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\nSee attached.\n--b\nContent-Type: application/pdf\nContent-Disposition: attachment; filename="${id}.pdf"\nContent-Transfer-Encoding: base64\n\n${Buffer.alloc(bytes, 7).toString('base64')}\n--b--\n\n`;

describe('the import worker against S3 and the queue (the cloud path)', () => {
  const sent: string[] = [];
  let queue: Server;
  let storage: S3Storage;
  let restoreConfig: () => void;
  const savedEnvironment = { ...process.env };

  beforeAll(async () => {
    queue = sqsDouble(sent);
    await new Promise<void>((resolve) => queue.listen(0, '127.0.0.1', resolve));
    // The SQS client reads its region and credentials as in Lambda: from the environment.
    Object.assign(process.env, { AWS_REGION: REGION, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' });
    restoreConfig = overrideConfig({
      IMPORT_QUEUE_URL: `http://127.0.0.1:${(queue.address() as AddressInfo).port}/000000000000/imports`,
    });
    storage = new S3Storage(s3.bucket, s3.config());
    useObjectStorage(storage);
  });

  afterAll(async () => {
    useObjectStorage(undefined);
    restoreConfig?.();
    for (const name of ['AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'])
      if (savedEnvironment[name] === undefined) delete process.env[name];
      else process.env[name] = savedEnvironment[name];
    await new Promise<void>((resolve) => (queue ? queue.close(() => resolve()) : resolve()));
  });

  type Setup = Awaited<ReturnType<typeof caseWithOwner>>;
  const asOwner = (s: Setup) => ({ token: s.owner.accessToken, organization: s.organizationId });

  /** createImport, PUT to its presigned S3 link with the headers it names, startImport: the import id and the message sent. */
  async function uploadAndStart(s: Setup, text: string, fileName = 'client mailbox.mbox') {
    const sizeBytes = Buffer.byteLength(text);
    const created = expectData(
      await invoke(routes.createImport, {
        ...asOwner(s),
        path: { caseId: s.caseId },
        body: { kind: 'email', fileName, contentType: 'application/mbox', sizeBytes },
      }),
      201,
    );
    // The link writes the upload's staging key; the worker copies it into the case's evidence.
    expect(created.upload.url.startsWith(`${s3.endpoint}/${s3.bucket}/staging/cases/${s.caseId}/imports/`)).toBe(true);
    expect(created.upload.headers).toEqual({ 'content-type': 'application/mbox', 'content-length': String(sizeBytes) });
    // With the Content-MD5 every client adds (the cloud bucket's Object Lock requires it).
    const put = await fetch(created.upload.url, {
      method: 'PUT',
      headers: { ...created.upload.headers, 'content-md5': md5Base64(text) },
      body: text,
    });
    expect(put.status, await put.text()).toBe(200);
    const before = sent.length;
    const started = expectData(
      await invoke(routes.startImport, { ...asOwner(s), path: { caseId: s.caseId, importId: created.import.id } }),
      202,
    );
    expect(started.status).toBe('queued');
    expect(sent.slice(before)).toEqual([JSON.stringify({ importId: created.import.id })]);
    return { importId: created.import.id as string, message: sent.at(-1)! };
  }

  const importOf = async (s: Setup, importId: string) =>
    expectData(await invoke(routes.getImport, { ...asOwner(s), path: { caseId: s.caseId, importId } }));

  it('imports an uploaded mailbox from one queue message: hashed, every message in, attachments stored in S3; a redelivery changes nothing', async () => {
    // Prepare
    const s = await caseWithOwner();
    const text = [
      mboxMessage('root', 'Settlement'),
      mboxMessage('other', 'Filing'),
      mboxWithAttachment('exhibit-a', 20_000),
    ].join('');
    const { importId, message } = await uploadAndStart(s, text);

    // Act
    const answer = await importWorker(sqsEvent([{ messageId: 'm1', body: message }]), lambdaContext());
    const redelivered = await importWorker(sqsEvent([{ messageId: 'm1', body: message }]), lambdaContext());

    // Assess
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(redelivered).toEqual({ batchItemFailures: [] });
    expect(await importOf(s, importId)).toMatchObject({
      status: 'succeeded',
      sha256: createHash('sha256').update(text).digest('hex'),
      error: null,
      progress: { itemsRead: 3, itemsImported: 3, itemsSkipped: 0, percent: 100, bytesRead: Buffer.byteLength(text) },
    });
    expect(await db().select({ id: emails.id }).from(emails).where(eq(emails.caseId, s.caseId))).toHaveLength(3);
    // The attachment went to the bucket under the case's prefix, hashed for later downloads.
    const attachments = await db()
      .select()
      .from(evidenceObjects)
      .where(like(evidenceObjects.key, `cases/${s.caseId}/emails/%`));
    expect(attachments).toHaveLength(1);
    expect(attachments[0]!.sizeBytes).toBe(20_000);
    expect(await storage.size(attachments[0]!.key)).toBe(20_000);
    expect(
      createHash('sha256')
        .update(await bytesOf(await storage.read(attachments[0]!.key)))
        .digest('hex'),
    ).toBe(attachments[0]!.sha256);
    // Nothing was sent back to the queue.
    expect(sent.filter((body) => body.includes(importId))).toHaveLength(1);
  });

  it('pauses an import at a checkpoint when the invocation runs short, sends it back, and the next invocation resumes it from that byte', async () => {
    // Prepare: more messages than one batch (500), and an invocation that runs short after its first batch
    const s = await caseWithOwner();
    const text = Array.from({ length: 520 }, (_, index) => mboxMessage(`m${index}`, `Subject ${index}`)).join('');
    const { importId, message } = await uploadAndStart(s, text);
    let checks = 0;
    const runningShort = lambdaContext(() => (checks++ === 0 ? 15 * 60_000 : 90_000));

    // Act
    const before = sent.length;
    const first = await importWorker(sqsEvent([{ messageId: 'first', body: message }]), runningShort);
    const paused = await importOf(s, importId);
    const requeued = sent.slice(before);
    const second = await importWorker(sqsEvent([{ messageId: 'second', body: requeued[0]! }]), lambdaContext());

    // Assess
    expect(first).toEqual({ batchItemFailures: [] });
    // Paused at a checkpoint: queued again, keeping its turn.
    expect(paused).toMatchObject({ status: 'queued', progress: { itemsRead: 500, itemsImported: 500 } });
    expect(paused.progress.bytesRead).toBeGreaterThan(0);
    expect(paused.progress.bytesRead).toBeLessThan(Buffer.byteLength(text));
    expect(requeued).toEqual([JSON.stringify({ importId })]);
    expect(second).toEqual({ batchItemFailures: [] });
    expect(await importOf(s, importId)).toMatchObject({
      status: 'succeeded',
      progress: { itemsRead: 520, itemsImported: 520, itemsSkipped: 0, percent: 100 },
    });
    expect(await db().select({ id: emails.id }).from(emails).where(eq(emails.caseId, s.caseId))).toHaveLength(520);
  });

  it('drops a message that names no import, skips one with nothing to claim, and reports only the run that failed', async () => {
    // Prepare: an import whose upload cannot be read (S3 unreachable: no answer about the object)
    const s = await caseWithOwner();
    const text = mboxMessage('lonely', 'Lonely');
    const { importId, message } = await uploadAndStart(s, text);
    const unreachable = new S3Storage(s3.bucket, s3.config({ endpoint: 'http://127.0.0.1:9', maxAttempts: 1 }));

    // Act
    useObjectStorage(unreachable);
    const answer = await importWorker(
      sqsEvent([
        { messageId: 'garbage', body: 'not json' },
        { messageId: 'wrong-shape', body: JSON.stringify({ id: importId }) },
        { messageId: 'unknown', body: JSON.stringify({ importId: randomUUID() }) },
        { messageId: 'failing', body: message },
      ]),
      lambdaContext(),
    ).finally(() => useObjectStorage(storage));
    const failed = await importOf(s, importId);
    // The client retries through the API: the retry route sends it again, and the worker finishes it.
    const before = sent.length;
    expectData(await invoke(routes.retryImport, { ...asOwner(s), path: { caseId: s.caseId, importId } }), 202);
    const retried = await importWorker(sqsEvent([{ messageId: 'retry', body: sent.at(-1)! }]), lambdaContext());

    // Assess
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: 'failing' }] });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'INTERNAL' } });
    expect(sent.slice(before)).toEqual([JSON.stringify({ importId })]);
    expect(retried).toEqual({ batchItemFailures: [] });
    expect(await importOf(s, importId)).toMatchObject({ status: 'succeeded', progress: { itemsImported: 1 } });
  });

  it('sends an import back to the queue untouched when a message arrives with too little of the invocation left', async () => {
    const s = await caseWithOwner();
    const { importId, message } = await uploadAndStart(s, mboxMessage('late', 'Late'));
    const before = sent.length;

    const answer = await importWorker(
      sqsEvent([{ messageId: 'late', body: message }]),
      lambdaContext(() => 60_000),
    );

    expect(answer).toEqual({ batchItemFailures: [] });
    expect(sent.slice(before)).toEqual([JSON.stringify({ importId })]);
    const [row] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, importId));
    expect(row).toMatchObject({ status: 'queued', itemsRead: 0, sha256: null });
  });

  it('copies a large upload into evidence in segments: pauses between them when the invocation runs short, the next invocation goes on', async () => {
    // Prepare: segments of 300 bytes (1 GiB in use), an invocation that runs short after its first segment
    const SEGMENT = 300;
    const s = await caseWithOwner();
    const text = Array.from({ length: 8 }, (_, index) => mboxMessage(`seg${index}`, `Segment ${index}`)).join('');
    const segments = Math.ceil(Buffer.byteLength(text) / SEGMENT);
    const { importId, message } = await uploadAndStart(s, text);
    const copying = new PartCopyingS3Storage(s3);
    const restoreSegments = overrideConfig({ IMPORT_COPY_SEGMENT_BYTES: SEGMENT });
    useObjectStorage(copying);
    try {
      let checks = 0;
      const runningShort = lambdaContext(() => (checks++ === 0 ? 15 * 60_000 : 90_000));

      // Act
      const before = sent.length;
      const first = await importWorker(sqsEvent([{ messageId: 'seg-1', body: message }]), runningShort);
      const [paused] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, importId));
      const requeued = sent.slice(before);
      const second = await importWorker(sqsEvent([{ messageId: 'seg-2', body: requeued[0]! }]), lambdaContext());

      // Assess
      expect(first).toEqual({ batchItemFailures: [] });
      expect(paused).toMatchObject({ status: 'queued', attempts: 0, sha256: null, copiedBytes: SEGMENT, itemsRead: 0 });
      expect(requeued).toEqual([JSON.stringify({ importId })]);
      expect(second).toEqual({ batchItemFailures: [] });
      const done = await importOf(s, importId);
      expect(done).toMatchObject({
        status: 'succeeded',
        sha256: createHash('sha256').update(text).digest('hex'),
        progress: { itemsImported: 8 },
      });
      expect(copying.copies.map((copy) => copy.partNumber)).toEqual(Array.from({ length: segments }, (_, i) => i + 1));
      const [row] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, importId));
      // One multipart upload of the evidence key, completed; the evidence read back pinned is the file.
      expect(
        s3.passed.filter((request) => request.startsWith(`POST /${s3.bucket}/${row!.objectKey}?uploadId`)),
      ).toHaveLength(1);
      expect((await bytesOf(await copying.read(row!.objectKey, { version: row!.evidenceVersion! }))).toString()).toBe(
        text,
      );
      expect(
        await db().select().from(evidenceImportSegments).where(eq(evidenceImportSegments.importId, importId)),
      ).toHaveLength(segments);
    } finally {
      useObjectStorage(storage);
      restoreSegments();
    }
  });

  it('runs a tagging job by filter from its queue message', async () => {
    // Prepare
    const s = await caseWithOwner();
    const { emailIds } = await seedThread(
      s.caseId,
      Array.from({ length: 3 }, (_, minute) => ({ minute })),
    );
    const [tag] = await db()
      .insert(tags)
      .values({ organizationId: s.organizationId, caseId: s.caseId, name: 'Queued', nameLowercase: 'queued' })
      .returning();
    const before = sent.length;
    const started = expectData(
      await invoke(routes.tagEvidence, {
        token: s.owner.accessToken,
        path: { caseId: s.caseId },
        body: { add: [tag!.id], filter: { kind: 'email' } },
      }),
      202,
    );
    const message = JSON.stringify({ taggingJobId: started.id });
    expect(sent.slice(before)).toEqual([message]);

    // Act
    const result = await importWorker(sqsEvent([{ messageId: 't1', body: message }]), lambdaContext());

    // Assess
    expect(result).toEqual({ batchItemFailures: [] });
    const done = expectData(
      await invoke(routes.getTaggingJob, { token: s.owner.accessToken, path: { caseId: s.caseId, jobId: started.id } }),
    );
    expect(done).toMatchObject({ status: 'succeeded', totalItems: 3, processedItems: 3, addedLinks: 3 });
    const links = await db().select().from(emailTags).where(eq(emailTags.tagId, tag!.id));
    expect(links.map((l) => l.emailId).sort()).toEqual([...emailIds].sort());
  });

  it('builds a custody export from its queue message: a volume per step, paused and sent back when short of time, stored in S3', async () => {
    // Prepare: 25 emails, volumes of 10 item lines (three volumes)
    const s = await caseWithOwner();
    await seedThread(
      s.caseId,
      Array.from({ length: 25 }, (_, minute) => ({ minute })),
    );
    const saved = custodyLimits.volumeWeight;
    custodyLimits.volumeWeight = 10;
    try {
      const before = sent.length;
      const started = expectData(
        await invoke(routes.startCustodyExport, { token: s.owner.accessToken, path: { caseId: s.caseId } }),
        202,
      );
      const message = JSON.stringify({ custodyExportId: started.id });
      expect(sent.slice(before)).toEqual([message]);

      // Act: an invocation short of time writes one volume and sends the export back; the next finishes it.
      const first = await importWorker(
        sqsEvent([{ messageId: 'c1', body: message }]),
        lambdaContext(() => 90_000),
      );
      const paused = expectData(
        await invoke(routes.getCustodyExport, {
          token: s.owner.accessToken,
          path: { caseId: s.caseId, exportId: started.id },
        }),
      );
      const requeued = sent.slice(before + 1);
      const second = await importWorker(sqsEvent([{ messageId: 'c2', body: message }]), lambdaContext());
      const done = expectData(
        await invoke(routes.getCustodyExport, {
          token: s.owner.accessToken,
          path: { caseId: s.caseId, exportId: started.id },
        }),
      );

      // Assess
      expect(first).toEqual({ batchItemFailures: [] });
      expect(paused).toMatchObject({ status: 'queued', progress: { itemsWritten: 10, volumesWritten: 1 } });
      expect(requeued).toEqual([message]);
      expect(second).toEqual({ batchItemFailures: [] });
      expect(done).toMatchObject({ status: 'succeeded', progress: { itemsWritten: 25, percent: 100 } });
      expect(done.volumes.map((volume: any) => volume.items)).toEqual([10, 10, 5]);
      for (const volume of done.volumes) {
        expect(volume.downloadUrl.startsWith(`${s3.endpoint}/${s3.bucket}/generated/cases/${s.caseId}/custody/`)).toBe(
          true,
        );
        const pdf = await fetch(volume.downloadUrl);
        expect(pdf.status).toBe(200);
        expect(
          Buffer.from(await pdf.arrayBuffer())
            .subarray(0, 5)
            .toString(),
        ).toBe('%PDF-');
      }
    } finally {
      custodyLimits.volumeWeight = saved;
    }
  });
});
