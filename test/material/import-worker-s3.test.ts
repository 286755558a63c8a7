import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HeadObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Context, SQSEvent } from 'aws-lambda';
import { eq, like } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { handler as importWorker } from '../../infra/functions/import-worker';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { emails, evidenceImports, evidenceObjects } from '../../lib/db/schema';
import { DirectoryStorage, S3Storage, useObjectStorage } from '../../lib/storage';
import { expectData, invoke } from '../harness/invoke';
import { caseWithOwner } from './material-helpers';

/**
 * The cloud storage path (lib/storage S3Storage) against the s3rver emulator, started here on a
 * random port in a temporary directory. s3rver does not check SigV4 signatures, so it sits behind
 * a small proxy that checks presigned requests the way S3 does (recomputing the signature over the
 * request's own method, path, query and signed headers with the SDK's signer): a link's bound
 * content length and type are then enforced as they are in the cloud.
 */

const BUCKET = 'case-evidence-test-objects';
const REGION = 'us-east-1';
// s3rver's built-in account: it accepts these and no other key.
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;
// A CommonJS package without types.
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

let directory: string;
let emulator: S3rverInstance;
let emulatorPort: number;
let proxy: Server;
let endpoint: string;
/** Presigned requests the proxy refused, with S3's reason. */
const refused: string[] = [];
/** Every request the proxy passed on: method, path and the names of its query parameters. */
const passed: string[] = [];

/** The client settings the cloud path runs with against the emulator (DESIGN.md: checksums only where required). */
function emulatorConfig(overrides: Partial<S3ClientConfig> = {}): S3ClientConfig {
  return {
    endpoint,
    forcePathStyle: true,
    region: REGION,
    credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...overrides,
  };
}

type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: SourceData) =>
  typeof data === 'string'
    ? Buffer.from(data)
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** node:crypto in the shape the SDK signer takes (what @smithy/hash-node provides to the SDK itself). */
class NodeSha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
}

const signer = new SignatureV4({
  credentials,
  region: REGION,
  service: 's3',
  sha256: NodeSha256,
  uriEscapePath: false,
});

/** 20261124T221606Z -> Date */
const amzDate = (text: string) =>
  new Date(text.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));

/**
 * Why S3 would refuse this presigned request, or null when it would take it: the signature must be
 * the one computed over this request's method, path, query and the values of the headers the link
 * names as signed; the link must not have expired; a PUT needs a content-length.
 */
async function presignedRefusal(req: IncomingMessage, url: URL): Promise<string | null> {
  const params = url.searchParams;
  const signedHeaders = (params.get('X-Amz-SignedHeaders') ?? '').split(';');
  const signingDate = amzDate(params.get('X-Amz-Date') ?? '');
  const expiresIn = Number(params.get('X-Amz-Expires'));
  if (Date.now() > signingDate.getTime() + expiresIn * 1000) return 'AccessDenied: Request has expired';
  if (req.method === 'PUT' && req.headers['content-length'] === undefined) return 'MissingContentLength';
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = req.headers[name];
    if (value === undefined) return `SignatureDoesNotMatch: signed header ${name} not sent`;
    headers[name] = String(value);
  }
  // The payload hash travels in the query; the signer reads it from the header and hoists it back.
  headers['X-Amz-Content-Sha256'] = params.get('X-Amz-Content-Sha256') ?? '';
  const query: Record<string, string> = {};
  for (const [name, value] of params)
    if (name !== 'X-Amz-Signature' && name !== 'X-Amz-Content-Sha256') query[name] = value;
  const expected = await signer.presign(
    {
      method: req.method ?? 'GET',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query,
      headers,
    },
    { signingDate, expiresIn },
  );
  return expected.query?.['X-Amz-Signature'] === params.get('X-Amz-Signature')
    ? null
    : 'SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided';
}

/** Checks presigned requests, then passes every request on to s3rver unchanged. */
async function verifyingProxy(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
  if (url.searchParams.has('X-Amz-Algorithm')) {
    const refusal = await presignedRefusal(req, url);
    if (refusal) {
      refused.push(refusal);
      req.resume();
      const code = refusal.split(':')[0]!;
      res.writeHead(code === 'MissingContentLength' ? 411 : 403, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code></Error>`);
      return;
    }
  }
  passed.push(`${req.method} ${url.pathname}?${[...url.searchParams.keys()].join('&')}`);
  const upstream = request(
    { host: '127.0.0.1', port: emulatorPort, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
}

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'cebs-s3rver-'));
  emulator = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET }],
  });
  emulatorPort = (await emulator.run()).port;
  proxy = createServer((req, res) => {
    verifyingProxy(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await emulator?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function bytesOf(stream: Readable | null): Promise<Buffer> {
  if (!stream) throw new Error('no object');
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const put = (url: string, body: Uint8Array, headers: Record<string, string>) =>
  fetch(url, { method: 'PUT', headers, body });

describe('S3Storage against the S3 emulator', () => {
  it('signs upload links over the length and type: exactly the declared bytes are stored, a larger or smaller body or another type is refused', async () => {
    // Prepare
    const storage = new S3Storage(BUCKET, emulatorConfig());
    const key = `cases/${randomBytes(4).toString('hex')}/imports/mailbox.mbox`;
    const body = randomBytes(2048);
    const url = await storage.uploadUrl(key, { contentType: 'application/mbox', size: body.length }, 900);
    const headers = { 'content-type': 'application/mbox', 'content-length': String(body.length) };
    const before = refused.length;

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
    expect(refused.slice(before)).toEqual(Array(3).fill(expect.stringMatching(/^SignatureDoesNotMatch/)));
    expect(sizeAfterRefusals).toBeNull();
    expect(stored.status).toBe(200);
    const head = await new S3Client(emulatorConfig()).send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(head.ContentLength).toBe(body.length);
    expect(head.ContentType).toBe('application/mbox');
    expect(await storage.size(key)).toBe(body.length);
    expect(sha256(await bytesOf(await storage.read(key)))).toBe(sha256(body));
  });

  it('signs upload links without the empty-body checksum the default client bakes in (S3 would refuse every upload)', async () => {
    // Prepare: the SDK's default checksum settings, as in the cloud
    const {
      requestChecksumCalculation: _request,
      responseChecksumValidation: _response,
      ...defaults
    } = emulatorConfig();
    const storage = new S3Storage(BUCKET, defaults);
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
    const storage = new S3Storage(BUCKET, emulatorConfig());
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
    const storage = new S3Storage(BUCKET, emulatorConfig());
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
    const storage = new S3Storage(BUCKET, emulatorConfig());
    const prefix = `cases/${randomBytes(4).toString('hex')}/attachments/`;
    const small = randomBytes(1000);
    const chunks = Array.from({ length: 9 }, () => randomBytes(1024 * 1024));
    const large = Buffer.concat(chunks);

    // Act
    await storage.putStream(`${prefix}small.txt`, Readable.from([small]), 'text/plain');
    const from = passed.length;
    await storage.putStream(`${prefix}large.bin`, Readable.from(chunks), 'application/octet-stream');
    const largeRequests = passed.slice(from);

    // Assess
    expect((await bytesOf(await storage.read(`${prefix}small.txt`))).equals(small)).toBe(true);
    expect(await storage.size(`${prefix}large.bin`)).toBe(large.length);
    expect(sha256(await bytesOf(await storage.read(`${prefix}large.bin`)))).toBe(sha256(large));
    const head = await new S3Client(emulatorConfig()).send(
      new HeadObjectCommand({ Bucket: BUCKET, Key: `${prefix}large.bin` }),
    );
    expect(head.ContentType).toBe('application/octet-stream');
    // Create, two parts, complete.
    const path = `/${BUCKET}/${prefix}large.bin`;
    expect(largeRequests.map((line) => line.replace(/=[^&]*/g, ''))).toEqual([
      `POST ${path}?uploads`,
      ...Array(2).fill(`PUT ${path}?partNumber&uploadId&x-id`),
      `POST ${path}?uploadId`,
    ]);
  });

  it('gives download links that fetch the object without credentials', async () => {
    const storage = new S3Storage(BUCKET, emulatorConfig());
    const key = `cases/${randomBytes(4).toString('hex')}/custody.pdf`;
    await storage.put(key, new Uint8Array([37, 80, 68, 70]), 'application/pdf');

    const answer = await fetch(await storage.downloadUrl(key, 60));

    expect(answer.status).toBe(200);
    expect(Buffer.from(await answer.arrayBuffer())).toEqual(Buffer.from([37, 80, 68, 70]));
  });
});

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
    const url = new URL(await storage.uploadUrl(key, { contentType: 'text/csv', size: 10 }, 600));
    const link = {
      expires: Number(url.searchParams.get('expires')),
      size: Number(url.searchParams.get('size')),
      signature: url.searchParams.get('signature') ?? '',
      contentType: 'text/csv',
    };

    const tooLarge = await storage.writeSignedStream(key, link, Readable.from([Buffer.alloc(6), Buffer.alloc(6)]));
    const otherType = await storage.writeSignedStream(key, { ...link, contentType: 'text/html' }, Readable.from([]));
    const stored = await storage.writeSignedStream(key, link, Readable.from([Buffer.from('a,b\n1,2\n')]));

    expect([tooLarge, otherType, stored]).toEqual(['too-large', 'forbidden', 'stored']);
    expect((await bytesOf(await storage.read(key))).toString()).toBe('a,b\n1,2\n');
  });
});

/**
 * Stands in for SQS's SendMessage (the AWS JSON protocol the SDK speaks): the client in
 * lib/material/imports/queue.ts sends to the queue URL's host, so IMPORT_QUEUE_URL pointing here
 * collects what the routes, maintenance and the worker send.
 */
function sqsDouble(sent: string[]): Server {
  return createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text || '{}') as { MessageBody?: string };
      if (req.headers['x-amz-target'] !== 'AmazonSQS.SendMessage' || body.MessageBody === undefined) {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ __type: 'com.amazonaws.sqs#InvalidAction', message: 'SendMessage only' }));
        return;
      }
      sent.push(body.MessageBody);
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(
        JSON.stringify({
          MessageId: randomUUID(),
          // The SDK checks the body's MD5 against this.
          MD5OfMessageBody: createHash('md5').update(body.MessageBody).digest('hex'),
        }),
      );
    });
  });
}

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
    storage = new S3Storage(BUCKET, emulatorConfig());
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
    expect(created.upload.url.startsWith(`${endpoint}/${BUCKET}/cases/${s.caseId}/imports/`)).toBe(true);
    expect(created.upload.headers).toEqual({ 'content-type': 'application/mbox', 'content-length': String(sizeBytes) });
    const put = await fetch(created.upload.url, { method: 'PUT', headers: created.upload.headers, body: text });
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
    expect(paused).toMatchObject({ status: 'running', progress: { itemsRead: 500, itemsImported: 500 } });
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
    const unreachable = new S3Storage(BUCKET, emulatorConfig({ endpoint: 'http://127.0.0.1:9', maxAttempts: 1 }));

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
});
