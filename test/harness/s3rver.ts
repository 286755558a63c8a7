import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';

/**
 * The S3 emulator of the tests: s3rver, started on a random port in a temporary directory with one
 * bucket. s3rver does not check SigV4 signatures, so it sits behind a small proxy that checks
 * presigned requests the way S3 does (recomputing the signature over the request's own method,
 * path, query and signed headers with the SDK's signer): a link's bound content length and type
 * are then enforced as they are in the cloud. Nor does it check a body against its Content-MD5 or
 * x-amz-checksum-crc32 header: the proxy does that too (400 BadDigest / InvalidDigest, as S3). It
 * records what it passed and refused.
 */

export const REGION = 'us-east-1';
// s3rver's built-in account: it accepts these and no other key.
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;
// A CommonJS package without types.
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

/** A request the proxy passed on to s3rver. */
export interface PassedRequest {
  method: string;
  path: string;
  /** Names of its query parameters. */
  query: string[];
  headers: IncomingHttpHeaders;
}

export interface S3Emulator {
  bucket: string;
  /** The proxy's URL: what clients talk to. */
  endpoint: string;
  /**
   * The client settings the cloud path runs with against the emulator: checksums only where
   * required (DESIGN.md: otherwise stream uploads are stored with their chunk framing).
   */
  config(overrides?: Partial<S3ClientConfig>): S3ClientConfig;
  /** Presigned requests the proxy refused, with S3's reason. */
  refused: string[];
  /** Every request passed on, as `METHOD path?name&name` (query parameter names only). */
  passed: string[];
  /** The same requests with their headers. */
  requests: PassedRequest[];
  close(): Promise<void>;
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
  // S3 refuses x-amz-* headers a presigned request did not sign (Content-MD5 may go unsigned).
  const unsigned = Object.keys(req.headers).filter(
    (name) => name.startsWith('x-amz-') && !signedHeaders.includes(name),
  );
  if (unsigned.length > 0)
    return `AccessDenied: There were headers present in the request which were not signed: ${unsigned.join(', ')}`;
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

/** Reads a request body whole (test bodies are small). */
async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Why S3 would refuse this body for its integrity headers (Content-MD5, x-amz-checksum-crc32), or null. */
function digestRefusal(headers: IncomingHttpHeaders, body: Buffer): string | null {
  const md5 = headers['content-md5'];
  if (typeof md5 === 'string') {
    if (!/^[A-Za-z0-9+/]{22}==$/.test(md5)) return 'InvalidDigest: The Content-MD5 you specified was invalid';
    if (createHash('md5').update(body).digest('base64') !== md5)
      return 'BadDigest: The Content-MD5 you specified did not match what we received';
  }
  const crc = headers['x-amz-checksum-crc32'];
  if (typeof crc === 'string') {
    const expected = Buffer.alloc(4);
    expected.writeUInt32BE(crc32(body));
    if (expected.toString('base64') !== crc)
      return 'BadDigest: The CRC32 you specified did not match the calculated checksum';
  }
  return null;
}

/** Starts s3rver with `bucket` and the verifying proxy in front of it; close() stops both and removes the files. */
export async function startS3Emulator(bucket = 'case-evidence-test-objects'): Promise<S3Emulator> {
  const directory = mkdtempSync(join(tmpdir(), 'cebs-s3rver-'));
  const emulator = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const emulatorPort = (await emulator.run()).port;
  const refused: string[] = [];
  const passed: string[] = [];
  const requests: PassedRequest[] = [];

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
    // A body with an integrity header is read whole and checked before s3rver stores any of it.
    const checked = req.headers['content-md5'] !== undefined || req.headers['x-amz-checksum-crc32'] !== undefined;
    const body = checked ? await bodyOf(req) : undefined;
    const digest = body && digestRefusal(req.headers, body);
    if (digest) {
      refused.push(digest);
      res.writeHead(400, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${digest.split(':')[0]}</Code></Error>`);
      return;
    }
    const query = [...url.searchParams.keys()];
    passed.push(`${req.method} ${url.pathname}?${query.join('&')}`);
    requests.push({ method: req.method ?? 'GET', path: url.pathname, query, headers: { ...req.headers } });
    const upstream = request(
      { host: '127.0.0.1', port: emulatorPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    if (body) upstream.end(body);
    else req.pipe(upstream);
  }

  const proxy = createServer((req, res) => {
    verifyingProxy(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return {
    bucket,
    endpoint,
    config: (overrides = {}) => ({
      endpoint,
      forcePathStyle: true,
      region: REGION,
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...overrides,
    }),
    refused,
    passed,
    requests,
    close: async () => {
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await emulator.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
