import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { addSeconds, now } from '../clock';
import { config, selfLink } from '../config';
import { lazyRetrying } from '../lazy';
import { traced } from '../observability/tracing';
import { digestingStream } from './digesting-stream';
import { localSecret } from '../secrets';

/**
 * Where a case's evidence objects live (email importer, device-note attachments and their upload
 * links); the cloud grants storage functions this layout (infra/permissions.ts).
 */
export const casePrefix = (caseId: string) => `cases/${caseId}/`;

/**
 * Where upload links put files (`staging/cases/<caseId>/...`): a location the links cover and
 * nothing reads as evidence. Starting an import (or importing device notes) copies the verified
 * bytes out of it into the case's evidence location (casePrefix), which no link covers; what is
 * left here is removed (the maintenance job locally, a lifecycle rule in the cloud).
 */
export const STAGING_PREFIX = 'staging/';
/**
 * Days the cloud's lifecycle rule keeps a staging object (infra/constructs/object-store.ts): a
 * backstop only. The service removes every staging object it knows of itself (the worker once it
 * copied the upload into evidence, cancel, maintenance for uploads never started), so the figure
 * is set by how long a started import may wait its organization's turn before its upload is
 * copied: 30 days, with maintenance reporting a wait nearing it (IMPORT_WAIT_ALERT_DAYS).
 */
export const STAGING_EXPIRATION_DAYS = 30;
export const caseStagingPrefix = (caseId: string) => `${STAGING_PREFIX}${casePrefix(caseId)}`;
/** The staging key an upload link writes for the evidence key it will become. */
export const stagingKeyOf = (evidenceKey: string) => `${STAGING_PREFIX}${evidenceKey}`;

/**
 * Where generated documents live (custody and report PDFs): outside the evidence location and its
 * Object Lock, removed once they expire.
 */
export const GENERATED_PREFIX = 'generated/';

/**
 * Where answers too large for Lambda's payload limit wait for their client (lib/storage/answers.ts):
 * minutes, then removed (the work bucket's lifecycle rule, maintenance locally).
 */
export const ANSWER_PREFIX = 'answers/';

/** Where evidence attachments and reports are kept: S3 in the cloud, a directory locally. */
export interface ObjectStorage {
  /** `options.contentEncoding`: the body is compressed so (S3 serves it with that Content-Encoding). */
  put(key: string, body: Uint8Array, contentType: string, options?: PutOptions): Promise<void>;
  /**
   * Stores a stream of unknown length without holding it whole (S3: a multipart upload; a
   * directory: a temporary file renamed into place), so a reader never sees half an object.
   * `size`, when known, lets S3 cut parts large enough for S3's 10,000 (a copied 5 TiB import).
   */
  putStream(key: string, body: Readable, contentType: string, options?: { size?: number }): Promise<StoredVersion>;
  /** A time-limited URL that downloads the object without credentials. */
  downloadUrl(key: string, expiresInSeconds: number): Promise<string>;
  /**
   * A time-limited URL that uploads the object with one PUT of exactly `size` bytes, without
   * credentials. The upload must send `content-type: <contentType>` and `content-length: <size>`
   * (S3 signs both into the URL; the local store holds it to the type and to exactly `size` bytes),
   * and `content-md5: <base64 of the body's MD5>`. Uploads land in the work bucket (staging/), which
   * has no Object Lock, so S3 checks the header when sent (400 BadDigest on a mismatch) but does
   * not insist on it; the local store requires it, as the evidence bucket's Object Lock would, so a
   * client built against the local server works with either bucket.
   */
  uploadUrl(key: string, file: { contentType: string; size: number }, expiresInSeconds: number): Promise<string>;
  /** The object's size in bytes; null when there is no such object. */
  size(key: string): Promise<number | null>;
  /** The object's size, type and the version of its bytes (read() can insist on it); null when there is none. */
  stat(key: string): Promise<ObjectStat | null>;
  /**
   * The object's bytes as a stream, to hash, copy or import without holding it whole, from byte
   * `start` (default 0: a resumed import continues at its checkpoint); null when there is no such
   * object. A start at or past the end gives an empty stream. With `version` (from stat or
   * putStream) only those bytes are read: null when the object is no longer that version. With
   * `end`, the bytes before it only (a segment of the object).
   */
  read(key: string, options?: ReadOptions): Promise<Readable | null>;
  /** Removes the object; nothing happens when there is none. */
  delete(key: string): Promise<void>;
  /**
   * Ends what upload links of `key` can do: the local store refuses every later PUT to it (409).
   * S3 cannot revoke a presigned link; there the callers' version checks (read with `version`)
   * make a later PUT change nothing they read.
   */
  seal(key: string): Promise<void>;
  /**
   * Opens a multipart upload of `key` (a file larger than one PUT can store): its upload id. The
   * parts go through partUploadUrl, completeMultipartUpload joins them into the object.
   */
  createMultipartUpload(key: string, contentType: string): Promise<string>;
  /**
   * A time-limited URL that uploads part `partNumber` of the upload with one PUT of exactly `size`
   * bytes and its Content-MD5, as uploadUrl does for a whole object; a link of one part writes no
   * other part, upload or key.
   */
  partUploadUrl(key: string, uploadId: string, part: PartSpec, expiresInSeconds: number): Promise<string>;
  /** The parts that arrived, by part number; null when there is no such upload (completed or aborted). */
  listParts(key: string, uploadId: string): Promise<UploadedPart[] | null>;
  /**
   * Joins `parts` (all of them, in order) into the object, which then exists as a whole; the upload
   * ends. The version written (read() can insist on it).
   */
  completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<StoredVersion>;
  /**
   * Copies bytes [range.start, range.end) of `source`, only as the version `source.version` (from
   * stat), into part `part` of the upload of `target`, within the store (S3: UploadPartCopy; no byte
   * passes through the caller); the part as completeMultipartUpload takes it. Null when the source
   * is not there as that version; NoSuchUploadError when the upload is not. Copying a part again
   * replaces it.
   */
  copyPart(
    source: { key: string; version: string },
    range: { start: number; end: number },
    target: { key: string; uploadId: string; partNumber: number },
  ): Promise<UploadedPart | null>;
  /** Ends the upload and removes its parts; nothing happens when there is none. */
  abortMultipartUpload(key: string, uploadId: string): Promise<void>;
}

export interface PutOptions {
  contentEncoding?: string;
  cacheControl?: string;
}

export interface PartSpec {
  /** 1 to MAX_PARTS. */
  partNumber: number;
  size: number;
}

/** A part that arrived: its number, size and ETag (what completing the upload names it by). */
export interface UploadedPart {
  partNumber: number;
  sizeBytes: number;
  etag: string;
}

/** The multipart upload is not there: completed, aborted, or removed by a lifecycle rule. */
export class NoSuchUploadError extends Error {}

/** S3's limits of a multipart upload: at most 10,000 parts of at most 5 GiB each (the last may be smaller than 5 MiB). */
export const MAX_PARTS = 10_000;
export const MAX_PART_BYTES = 5 * 1024 ** 3;

/**
 * Which bytes an object holds, opaque to callers: in S3 the object's VersionId (a versioned bucket)
 * or else its ETag; locally the file's inode, size and modification time (an upload replaces the
 * file, so a new upload is a new version).
 */
export interface StoredVersion {
  version: string;
}

export interface ObjectStat extends StoredVersion {
  size: number;
  /** The type it was stored with, where the store keeps one (S3). */
  contentType?: string;
}

export interface ReadOptions {
  start?: number;
  /** Exclusive; the object's end when unset. */
  end?: number;
  version?: string;
}

/** An object opened for a signed download: read twice from one open file (hashed, then served). */
export interface OpenedObject {
  size: number;
  /** A stream of the whole object; each call reads it again from the start. */
  stream(): Readable;
  close(): Promise<void>;
}

/**
 * The largest object one upload link can store: S3 takes at most 5 GiB in a single PUT (larger
 * objects need a multipart upload, which one link cannot express). Callers validate sizes against it.
 */
export const MAX_UPLOAD_LINK_BYTES = 5 * 1024 ** 3;

/** Parts of a multipart upload: 8 MiB, four in flight, so a streamed object costs about 32 MiB of memory. */
const PART_SIZE = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 4;

/**
 * The checksum every server-side write sends (PutObject, and CreateMultipartUpload and each
 * UploadPart of a streamed upload): the bucket's Object Lock default retention refuses a write
 * without Content-MD5 or an x-amz checksum. Named on the request, it is sent whatever the client's
 * `requestChecksumCalculation` (the emulator's config says WHEN_REQUIRED); bodies are buffers
 * (lib-storage buffers each part), so it travels as a header, not as an aws-chunked trailer.
 */
const WRITE_CHECKSUM = { ChecksumAlgorithm: 'CRC32' } as const;

function assertByteOffset(start: number): void {
  if (!Number.isSafeInteger(start) || start < 0) throw new Error(`Invalid read offset ${start}`);
}

/** What S3 answers for a key that is not there: 404, or 403 without s3:ListBucket on the bucket. */
function isMissingObject(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === 404 || status === 403;
}

/**
 * Keys the cloud keeps in the work bucket (staging uploads, generated documents), every other key
 * in the evidence bucket. The evidence bucket's Object Lock is a default retention of the whole
 * bucket (7 years, compliance mode, in prod), so nothing written there can be removed; what must
 * expire lives in a bucket without it. The stack grants each prefix on its bucket by the same rule
 * (infra/constructs/object-store.ts).
 */
export const WORK_BUCKET_PREFIXES: readonly string[] = [STAGING_PREFIX, GENERATED_PREFIX, ANSWER_PREFIX];

export function isWorkBucketKey(key: string): boolean {
  return WORK_BUCKET_PREFIXES.some((prefix) => key.startsWith(prefix));
}

/** The cloud's two buckets: `evidence` (STORAGE_BUCKET, Object Lock) and `work` (WORK_BUCKET, expiring). */
export interface S3Buckets {
  evidence: string;
  work: string;
}

/**
 * Amazon S3 with presigned GET and PUT URLs; the SDK is imported on first use. Each key goes to its
 * bucket (isWorkBucketKey); one bucket name serves every key (an emulator with a single bucket).
 * `clientConfig` is for S3-compatible endpoints (the emulator in tests: endpoint, path-style
 * addressing, credentials, checksum settings); the cloud passes none and the SDK reads the Lambda role.
 */
export class S3Storage implements ObjectStorage {
  // Imported on first use; a failed import is tried again on the next call (lib/lazy.ts).
  private readonly s3 = lazyRetrying(() =>
    import('@aws-sdk/client-s3').then(({ S3Client }) => traced(new S3Client(this.clientConfig))),
  );
  private readonly buckets: S3Buckets;

  constructor(
    buckets: string | S3Buckets,
    private readonly clientConfig: S3ClientConfig = {},
  ) {
    this.buckets = typeof buckets === 'string' ? { evidence: buckets, work: buckets } : buckets;
  }

  /** The bucket that holds `key`. */
  private bucketOf(key: string): string {
    return isWorkBucketKey(key) ? this.buckets.work : this.buckets.evidence;
  }

  /**
   * The client that signs links. With the SDK's default (checksums whenever supported) a presigned
   * PUT carries the CRC32 of the empty body it was signed without (`x-amz-checksum-crc32=AAAAAA==`),
   * and S3 refuses every real upload to it; checksums only where an operation requires them. Not
   * traced: X-Ray's trace header would be signed into the link, and the uploader does not send it.
   */
  private readonly presigner = lazyRetrying(() =>
    import('@aws-sdk/client-s3').then(
      ({ S3Client }) => new S3Client({ ...this.clientConfig, requestChecksumCalculation: 'WHEN_REQUIRED' }),
    ),
  );

  /** What every server-side write of an object sends: KMS encryption and the checksum Object Lock requires. */
  private writeParams<B>(key: string, body: B, contentType: string) {
    return {
      Bucket: this.bucketOf(key),
      Key: key,
      Body: body,
      ContentType: contentType,
      ServerSideEncryption: 'aws:kms',
      ...WRITE_CHECKSUM,
    } as const;
  }

  async put(key: string, body: Uint8Array, contentType: string, options: PutOptions = {}): Promise<void> {
    const { PutObjectCommand } = await import('@aws-sdk/client-s3');
    await (await this.s3()).send(
      new PutObjectCommand({
        ...this.writeParams(key, body, contentType),
        ...(options.contentEncoding ? { ContentEncoding: options.contentEncoding } : {}),
        ...(options.cacheControl ? { CacheControl: options.cacheControl } : {}),
      }),
    );
  }

  async putStream(
    key: string,
    body: Readable,
    contentType: string,
    options: { size?: number } = {},
  ): Promise<StoredVersion> {
    const { Upload } = await import('@aws-sdk/lib-storage');
    // 8 MiB parts hold 78 GiB in 10,000 parts; a larger object gets larger parts, fewer in flight
    // (about 32 MiB buffered, at least one part: 525 MiB for 5 TiB).
    const partSize = Math.max(PART_SIZE, Math.ceil((options.size ?? 0) / MAX_PARTS / 1024 ** 2) * 1024 ** 2);
    const queueSize = Math.max(1, Math.min(PARTS_IN_FLIGHT, Math.floor((PART_SIZE * PARTS_IN_FLIGHT) / partSize)));
    // One PutObject below a part's size, a multipart upload above it; a failed multipart upload
    // is aborted (and the bucket's lifecycle rule removes any parts an abort leaves behind).
    const stored = await new Upload({
      client: await this.s3(),
      params: this.writeParams(key, body, contentType),
      partSize,
      queueSize,
    }).done();
    return { version: s3Version(stored) };
  }

  async downloadUrl(key: string, expiresInSeconds: number): Promise<string> {
    const [{ GetObjectCommand }, { getSignedUrl }] = await Promise.all([
      import('@aws-sdk/client-s3'),
      import('@aws-sdk/s3-request-presigner'),
    ]);
    return getSignedUrl(await this.presigner(), new GetObjectCommand({ Bucket: this.bucketOf(key), Key: key }), {
      expiresIn: expiresInSeconds,
    });
  }

  async uploadUrl(key: string, file: { contentType: string; size: number }, expiresInSeconds: number): Promise<string> {
    if (!Number.isSafeInteger(file.size) || file.size < 0 || file.size > MAX_UPLOAD_LINK_BYTES)
      throw new Error(`An upload link takes 0 to ${MAX_UPLOAD_LINK_BYTES} bytes, not ${file.size}`);
    const [{ PutObjectCommand }, { getSignedUrl }] = await Promise.all([
      import('@aws-sdk/client-s3'),
      import('@aws-sdk/s3-request-presigner'),
    ]);
    // The bucket encrypts by default (SSE-KMS), so the uploader needs no encryption header. The
    // length is signed, so a link made for `size` bytes stores exactly that many (S3 refuses any
    // other content-length with SignatureDoesNotMatch); the presigner leaves content-type
    // unsigned unless asked, and the local store holds uploads to it, so it is signed too.
    const url = await getSignedUrl(
      await this.presigner(),
      new PutObjectCommand({
        Bucket: this.bucketOf(key),
        Key: key,
        ContentType: file.contentType,
        ContentLength: file.size,
      }),
      { expiresIn: expiresInSeconds, signableHeaders: new Set(['content-type', 'content-length']) },
    );
    const signed = new URL(url).searchParams.get('X-Amz-SignedHeaders')?.split(';') ?? [];
    // A link that does not bind the length would let a client store more than it reserved.
    if (!signed.includes('content-length') || !signed.includes('content-type'))
      throw new Error(`Presigned upload does not sign its length and type (signed: ${signed.join(';')})`);
    return url;
  }

  async size(key: string): Promise<number | null> {
    return (await this.stat(key))?.size ?? null;
  }

  async stat(key: string): Promise<ObjectStat | null> {
    const { HeadObjectCommand } = await import('@aws-sdk/client-s3');
    try {
      const head = await (await this.s3()).send(new HeadObjectCommand({ Bucket: this.bucketOf(key), Key: key }));
      return {
        size: head.ContentLength ?? 0,
        version: s3Version(head),
        ...(head.ContentType ? { contentType: head.ContentType } : {}),
      };
    } catch (error) {
      // Without s3:ListBucket a missing key answers 403, not 404: either way there is no object.
      // Anything else (throttling, network) is not an answer about the object, and is thrown.
      if (isMissingObject(error)) return null;
      throw error;
    }
  }

  async read(key: string, options: ReadOptions = {}): Promise<Readable | null> {
    const start = options.start ?? 0;
    assertByteOffset(start);
    if (options.end !== undefined) {
      assertByteOffset(options.end);
      if (options.end <= start) return Readable.from([]);
    }
    const { GetObjectCommand } = await import('@aws-sdk/client-s3');
    const range =
      options.end !== undefined ? `bytes=${start}-${options.end - 1}` : start > 0 ? `bytes=${start}-` : undefined;
    try {
      const object = await (await this.s3()).send(
        new GetObjectCommand({
          Bucket: this.bucketOf(key),
          Key: key,
          ...(range ? { Range: range } : {}),
          ...(options.version === undefined ? {} : s3VersionCondition(options.version)),
        }),
      );
      // In Node the SDK's Body is an http.IncomingMessage: a Readable that streams as it arrives.
      return (object.Body as Readable | undefined) ?? null;
    } catch (error) {
      // A range that starts at or past the end (416) of an object that is there: nothing left to read.
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 416) return Readable.from([]);
      // 412: no longer the version asked for (If-Match); 404 (NoSuchVersion, NoSuchKey), or 403
      // without s3:ListBucket: no object either way (as size()).
      if (status === 412 || isMissingObject(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
    // S3 answers 204 whether or not the key was there.
    await (await this.s3()).send(new DeleteObjectCommand({ Bucket: this.bucketOf(key), Key: key }));
  }

  /** A presigned link cannot be revoked: readers pin the version instead (see ObjectStorage.seal). */
  async seal(_key: string): Promise<void> {}

  async createMultipartUpload(key: string, contentType: string): Promise<string> {
    const { CreateMultipartUploadCommand } = await import('@aws-sdk/client-s3');
    // Uploaded parts carry their Content-MD5 (as single uploads do): no checksum algorithm here.
    const created = await (await this.s3()).send(
      new CreateMultipartUploadCommand({ Bucket: this.bucketOf(key), Key: key, ContentType: contentType }),
    );
    if (!created.UploadId) throw new Error('S3 answered CreateMultipartUpload without an UploadId');
    return created.UploadId;
  }

  async partUploadUrl(key: string, uploadId: string, part: PartSpec, expiresInSeconds: number): Promise<string> {
    assertPart(part);
    const [{ UploadPartCommand }, { getSignedUrl }] = await Promise.all([
      import('@aws-sdk/client-s3'),
      import('@aws-sdk/s3-request-presigner'),
    ]);
    // The upload id and part number are in the signed query, the length in the signed headers:
    // the link writes exactly this part of this upload.
    const url = await getSignedUrl(
      await this.presigner(),
      new UploadPartCommand({
        Bucket: this.bucketOf(key),
        Key: key,
        UploadId: uploadId,
        PartNumber: part.partNumber,
        ContentLength: part.size,
      }),
      { expiresIn: expiresInSeconds, signableHeaders: new Set(['content-length']) },
    );
    const signed = new URL(url).searchParams.get('X-Amz-SignedHeaders')?.split(';') ?? [];
    if (!signed.includes('content-length'))
      throw new Error(`Presigned part upload does not sign its length (signed: ${signed.join(';')})`);
    return url;
  }

  async listParts(key: string, uploadId: string): Promise<UploadedPart[] | null> {
    const { ListPartsCommand } = await import('@aws-sdk/client-s3');
    const parts: UploadedPart[] = [];
    let marker: string | undefined;
    try {
      // At most 1,000 parts an answer: up to ten calls for the 10,000 parts an upload may have.
      for (;;) {
        const page = await (await this.s3()).send(
          new ListPartsCommand({
            Bucket: this.bucketOf(key),
            Key: key,
            UploadId: uploadId,
            ...(marker ? { PartNumberMarker: marker } : {}),
          }),
        );
        for (const part of page.Parts ?? [])
          parts.push({ partNumber: part.PartNumber ?? 0, sizeBytes: part.Size ?? 0, etag: part.ETag ?? '' });
        if (!page.IsTruncated || !page.NextPartNumberMarker) break;
        marker = page.NextPartNumberMarker;
      }
    } catch (error) {
      // NoSuchUpload: completed or aborted.
      if (isMissingObject(error)) return null;
      throw error;
    }
    return parts.sort((a, b) => a.partNumber - b.partNumber);
  }

  async completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<StoredVersion> {
    const { CompleteMultipartUploadCommand } = await import('@aws-sdk/client-s3');
    const completed = await (await this.s3()).send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucketOf(key),
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })) },
      }),
    );
    return { version: s3Version(completed) };
  }

  async copyPart(
    source: { key: string; version: string },
    range: { start: number; end: number },
    target: { key: string; uploadId: string; partNumber: number },
  ): Promise<UploadedPart | null> {
    assertPart({ partNumber: target.partNumber, size: range.end - range.start });
    assertByteOffset(range.start);
    const { UploadPartCopyCommand } = await import('@aws-sdk/client-s3');
    const condition = s3VersionCondition(source.version);
    const copySource = `${this.bucketOf(source.key)}/${source.key.split('/').map(encodeURIComponent).join('/')}`;
    try {
      const copied = await (await this.s3()).send(
        new UploadPartCopyCommand({
          Bucket: this.bucketOf(target.key),
          Key: target.key,
          UploadId: target.uploadId,
          PartNumber: target.partNumber,
          // The version pinned as GetObject pins it: by its id, or by If-Match on its ETag.
          CopySource: 'VersionId' in condition ? `${copySource}?versionId=${condition.VersionId}` : copySource,
          ...('IfMatch' in condition ? { CopySourceIfMatch: condition.IfMatch } : {}),
          CopySourceRange: `bytes=${range.start}-${range.end - 1}`,
        }),
      );
      const etag = copied.CopyPartResult?.ETag;
      if (!etag) throw new Error('S3 answered UploadPartCopy without an ETag');
      return { partNumber: target.partNumber, sizeBytes: range.end - range.start, etag };
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchUpload') throw new NoSuchUploadError(target.uploadId);
      // 412: the source is no longer that ETag; 404 (NoSuchKey, NoSuchVersion) or 403: not there.
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 412 || isMissingObject(error)) return null;
      throw error;
    }
  }

  async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    const { AbortMultipartUploadCommand } = await import('@aws-sdk/client-s3');
    try {
      await (await this.s3()).send(
        new AbortMultipartUploadCommand({ Bucket: this.bucketOf(key), Key: key, UploadId: uploadId }),
      );
    } catch (error) {
      if (!isMissingObject(error)) throw error;
    }
  }
}

function assertPart(part: PartSpec): void {
  if (!Number.isSafeInteger(part.partNumber) || part.partNumber < 1 || part.partNumber > MAX_PARTS)
    throw new Error(`A part number is 1 to ${MAX_PARTS}, not ${part.partNumber}`);
  if (!Number.isSafeInteger(part.size) || part.size < 1 || part.size > MAX_PART_BYTES)
    throw new Error(`A part takes 1 to ${MAX_PART_BYTES} bytes, not ${part.size}`);
}

/** An S3 object's version token: its VersionId in a versioned bucket, else its ETag. */
function s3Version(object: { VersionId?: string | undefined; ETag?: string | undefined }): string {
  if (object.VersionId && object.VersionId !== 'null') return `id:${object.VersionId}`;
  if (object.ETag) return `etag:${object.ETag}`;
  throw new Error('S3 answered without a VersionId or an ETag');
}

/** The GetObject parameters that read only the version a token names. */
function s3VersionCondition(version: string): { VersionId: string } | { IfMatch: string } {
  if (version.startsWith('id:')) return { VersionId: version.slice(3) };
  if (version.startsWith('etag:')) return { IfMatch: version.slice(5) };
  throw new Error(`Not a version of this store: ${version}`);
}

/** The 16 bytes a Content-MD5 header carries (base64, as S3 takes it); null when it is not that. */
function md5Digest(header: string): Buffer | null {
  const trimmed = header.trim();
  if (!/^[A-Za-z0-9+/]{22}==$/.test(trimmed)) return null;
  return Buffer.from(trimmed, 'base64');
}

/** Longest object key accepted (S3's limit is 1,024 bytes). */
const MAX_KEY_LENGTH = 1024;

/**
 * Whether `key` is a plain relative object key: segments separated by '/', none empty, '.' or
 * '..', no backslash, no NUL or other control character, not absolute. Checked segment by segment
 * rather than by comparing normalized path prefixes, which `../objects_sibling/x` passes.
 */
export function isSafeObjectKey(key: string): boolean {
  if (typeof key !== 'string' || key.length === 0 || Buffer.byteLength(key) > MAX_KEY_LENGTH) return false;
  // Backslashes are separators on Windows; control characters (NUL included) have no business in a key.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
  if (key.includes('\\') || /[\u0000-\u001f\u007f]/.test(key) || key.startsWith('/') || isAbsolute(key)) return false;
  return key.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');
}

function assertSafeObjectKey(key: string): void {
  if (!isSafeObjectKey(key))
    throw new Error('Invalid object key: it must be a relative path of non-empty segments other than . and ..');
}

/**
 * A directory (DATA_DIR/objects) with HMAC-signed, expiring download links that the local server
 * answers at /_local/objects/{key}: the same contract as presigned S3 URLs. Every key is checked
 * segment by segment (isSafeObjectKey), so nothing resolves outside the directory.
 */
export class DirectoryStorage implements ObjectStorage {
  private readonly root: string;

  constructor(
    root: string,
    private readonly secret: string | Uint8Array,
  ) {
    this.root = resolve(root);
  }

  private pathOf(key: string): string {
    assertSafeObjectKey(key);
    const path = join(this.root, ...key.split('/'));
    // Belt and braces: the resolved path is strictly inside the root.
    const inside = relative(this.root, path);
    if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside))
      throw new Error('Object key escapes the storage directory');
    return path;
  }

  /** Type and encoding are not kept: the local server serves them by the key's name (infra/local/dev-routes.ts). */
  async put(key: string, body: Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, body);
  }

  async putStream(key: string, body: Readable): Promise<StoredVersion> {
    await this.streamInto(key, [body]);
    const stored = await this.stat(key);
    if (!stored) throw new Error(`The object ${key} vanished as it was stored`);
    return { version: stored.version };
  }

  /**
   * Streams `stages` (a source, then transforms) into the key's file through a temporary file;
   * `beforeCommit` may still refuse the complete body (by throwing) before it takes the key.
   */
  private async streamInto(
    key: string,
    stages: [Readable, ...Transform[]],
    beforeCommit?: () => void | Promise<void>,
  ): Promise<void> {
    await this.streamIntoPath(this.pathOf(key), stages, beforeCommit);
  }

  private async streamIntoPath(
    path: string,
    stages: [Readable, ...Transform[]],
    beforeCommit?: () => void | Promise<void>,
  ): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    // Beside the object (same file system, so the rename is atomic), under a name no reader asks for.
    const partial = join(dirname(path), `.${basename(path)}.${randomUUID()}.partial`);
    try {
      await pipeline([...stages, createWriteStream(partial, { flags: 'wx' })]);
      await beforeCommit?.();
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async downloadUrl(key: string, expiresInSeconds: number): Promise<string> {
    assertSafeObjectKey(key);
    const expires = Math.floor(addSeconds(now(), expiresInSeconds).getTime() / 1000);
    const url = selfLink(`/_local/objects/${key.split('/').map(encodeURIComponent).join('/')}`);
    url.searchParams.set('expires', String(expires));
    url.searchParams.set('signature', this.sign(key, expires));
    return url.toString();
  }

  async uploadUrl(key: string, file: { contentType: string; size: number }, expiresInSeconds: number): Promise<string> {
    assertSafeObjectKey(key);
    const expires = Math.floor(addSeconds(now(), expiresInSeconds).getTime() / 1000);
    const url = selfLink(`/_local/uploads/${key.split('/').map(encodeURIComponent).join('/')}`);
    url.searchParams.set('expires', String(expires));
    url.searchParams.set('size', String(file.size));
    url.searchParams.set('signature', this.sign(`PUT\n${key}\n${file.contentType}\n${file.size}`, expires));
    return url.toString();
  }

  /**
   * Stores the body of a signed, unexpired upload link (the local server's /_local/uploads/{key}):
   * 'stored', or why not, as strict as S3 under Object Lock. Streamed into place, never held whole
   * (an uploaded export of several GB). A `contentMd5` (the request's Content-MD5 header) is
   * required ('missing-md5': S3 refuses an Object Lock upload without an integrity header) and
   * checked as S3 checks it: not the base64 of 16 bytes, or not the MD5 of the body, is
   * 'bad-digest'. The body must be exactly the signed size: 'too-large' once it passes it,
   * 'incomplete' when it ends short (S3's IncompleteBody). Nothing is stored unless 'stored'.
   */
  async writeSignedStream(
    key: string,
    link: { expires: number; size: number; signature: string; contentType: string; contentMd5?: string },
    body: Readable,
  ): Promise<SignedWriteOutcome> {
    if (
      !isSafeObjectKey(key) ||
      !Number.isSafeInteger(link.size) ||
      !this.isValidLink(`PUT\n${key}\n${link.contentType}\n${link.size}`, link.expires, link.signature)
    )
      return 'forbidden';
    if (await this.isSealed(key)) return 'sealed';
    return this.receiveExact(this.pathOf(key), link, body, async () => {
      // Sealed while the body was on its way: the upload came too late.
      if (await this.isSealed(key)) return 'sealed';
    });
  }

  /**
   * Stores the body of a signed, unexpired part link (the local server's /_local/uploads/{key} with
   * `uploadId` and `partNumber`): as strict as writeSignedStream (Content-MD5 required and checked,
   * exactly the signed size), and 'no-such-upload' once the upload was completed or aborted (S3's
   * NoSuchUpload), 'sealed' once its import started.
   */
  async writeSignedPart(
    key: string,
    link: {
      uploadId: string;
      partNumber: number;
      expires: number;
      size: number;
      signature: string;
      contentMd5?: string;
    },
    body: Readable,
  ): Promise<SignedWriteOutcome | 'no-such-upload'> {
    if (
      !isSafeObjectKey(key) ||
      !isLocalUploadId(link.uploadId) ||
      !Number.isSafeInteger(link.partNumber) ||
      link.partNumber < 1 ||
      link.partNumber > MAX_PARTS ||
      !Number.isSafeInteger(link.size) ||
      !this.isValidLink(partMessage(key, link.uploadId, link), link.expires, link.signature)
    )
      return 'forbidden';
    if (await this.isSealed(key)) return 'sealed';
    const parts = this.partsDirOf(key, link.uploadId);
    if (!(await isDirectory(parts))) return 'no-such-upload';
    const partPath = join(parts, partFileName(link.partNumber));
    return this.receiveExact(partPath, link, body, async (md5) => {
      if (await this.isSealed(key)) return 'sealed';
      if (!(await isDirectory(parts))) return 'no-such-upload';
      // The ETag S3 gives a part is its MD5; kept beside it, so listing never reads the parts.
      await writeFile(`${partPath}.etag`, `"${md5}"`);
    });
  }

  /**
   * Streams a body of exactly `link.size` bytes matching its Content-MD5 into `path` through a
   * temporary file; `lastCheck` (given the body's MD5 in hex) may still refuse it with an outcome.
   */
  private async receiveExact<Refusal extends string>(
    path: string,
    link: { size: number; contentMd5?: string },
    body: Readable,
    lastCheck: (md5: string) => Promise<Refusal | undefined>,
  ): Promise<SignedWriteOutcome | Refusal> {
    if (link.contentMd5 === undefined) return 'missing-md5';
    const expectedMd5 = md5Digest(link.contentMd5);
    if (expectedMd5 === null) return 'bad-digest';
    const md5 = createHash('md5');
    const tooLarge = new Error('The body is larger than the link allows');
    const incomplete = new Error('The body is shorter than the link allows');
    const badDigest = new Error('The body does not match its Content-MD5');
    let refusal: Refusal | undefined;
    const refused = new Error('Refused as it was committed');
    const counted = digestingStream(md5, { bytes: link.size, error: tooLarge });
    try {
      await this.streamIntoPath(path, [body, counted.stream], async () => {
        if (counted.sizeBytes() < link.size) throw incomplete;
        const digest = md5.digest();
        if (!digest.equals(expectedMd5)) throw badDigest;
        refusal = await lastCheck(digest.toString('hex'));
        if (refusal) throw refused;
      });
      return 'stored';
    } catch (error) {
      if (error === refused && refusal) return refusal;
      if (error === tooLarge) return 'too-large';
      if (error === incomplete) return 'incomplete';
      if (error === badDigest) return 'bad-digest';
      throw error;
    }
  }

  async size(key: string): Promise<number | null> {
    if (!isSafeObjectKey(key)) return null;
    try {
      // stat, not read: an attachment may be large.
      const found = await stat(this.pathOf(key));
      return found.isFile() ? found.size : null;
    } catch {
      return null;
    }
  }

  async stat(key: string): Promise<ObjectStat | null> {
    if (!isSafeObjectKey(key)) return null;
    try {
      const found = await stat(this.pathOf(key), { bigint: true });
      return found.isFile() ? { size: Number(found.size), version: fileVersion(found) } : null;
    } catch {
      return null;
    }
  }

  async read(key: string, options: ReadOptions = {}): Promise<Readable | null> {
    const start = options.start ?? 0;
    assertByteOffset(start);
    const file = await this.openFile(key);
    if (!file) return null;
    // Compared on the open file: what is read is that version even if the key is replaced meanwhile.
    if (options.version !== undefined && fileVersion(await file.handle.stat({ bigint: true })) !== options.version) {
      await file.handle.close();
      return null;
    }
    if (options.end !== undefined) {
      assertByteOffset(options.end);
      if (options.end <= start) {
        await file.handle.close();
        return Readable.from([]);
      }
    }
    return file.handle.createReadStream({ start, ...(options.end === undefined ? {} : { end: options.end - 1 }) });
  }

  /** A marker beside the object: writeSignedStream refuses the key from then on. */
  async seal(key: string): Promise<void> {
    const marker = this.sealMarkerOf(key);
    await mkdir(dirname(marker), { recursive: true });
    await writeFile(marker, '');
  }

  private sealMarkerOf(key: string): string {
    const path = this.pathOf(key);
    return join(dirname(path), `.${basename(path)}.sealed`);
  }

  private async isSealed(key: string): Promise<boolean> {
    return stat(this.sealMarkerOf(key)).then(
      () => true,
      () => false,
    );
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  /**
   * Removes the objects under `prefix` last written before `before` (what S3 does by a lifecycle
   * rule): the number removed.
   */
  async removeWrittenBefore(prefix: string, before: Date): Promise<number> {
    assertSafeObjectKey(prefix.replace(/\/$/, ''));
    const entries = await readdir(this.pathOf(prefix.replace(/\/$/, '')), {
      recursive: true,
      withFileTypes: true,
    }).catch(() => []);
    let removed = 0;
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      const found = await stat(path).catch(() => null);
      if (found && found.mtimeMs < before.getTime()) {
        await rm(path, { force: true });
        removed += 1;
      }
    }
    return removed;
  }

  /** Where the parts of an upload wait: a directory beside the object, under a name no reader asks for. */
  private partsDirOf(key: string, uploadId: string): string {
    if (!isLocalUploadId(uploadId)) throw new Error('Invalid upload id');
    const path = this.pathOf(key);
    return join(dirname(path), `.${basename(path)}.${uploadId}.parts`);
  }

  async createMultipartUpload(key: string): Promise<string> {
    const uploadId = randomUUID();
    await mkdir(this.partsDirOf(key, uploadId), { recursive: true });
    return uploadId;
  }

  async partUploadUrl(key: string, uploadId: string, part: PartSpec, expiresInSeconds: number): Promise<string> {
    assertSafeObjectKey(key);
    assertPart(part);
    if (!isLocalUploadId(uploadId)) throw new Error('Invalid upload id');
    const expires = Math.floor(addSeconds(now(), expiresInSeconds).getTime() / 1000);
    const url = selfLink(`/_local/uploads/${key.split('/').map(encodeURIComponent).join('/')}`);
    url.searchParams.set('uploadId', uploadId);
    url.searchParams.set('partNumber', String(part.partNumber));
    url.searchParams.set('expires', String(expires));
    url.searchParams.set('size', String(part.size));
    url.searchParams.set('signature', this.sign(partMessage(key, uploadId, part), expires));
    return url.toString();
  }

  async listParts(key: string, uploadId: string): Promise<UploadedPart[] | null> {
    if (!isSafeObjectKey(key) || !isLocalUploadId(uploadId)) return null;
    const dir = this.partsDirOf(key, uploadId);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return null;
    }
    const parts: UploadedPart[] = [];
    for (const name of names.filter((entry) => /^\d{5}$/.test(entry)).sort()) {
      const [found, etag] = await Promise.all([
        stat(join(dir, name)).catch(() => null),
        readFile(join(dir, `${name}.etag`), 'utf8').catch(() => null),
      ]);
      if (found?.isFile() && etag !== null) parts.push({ partNumber: Number(name), sizeBytes: found.size, etag });
    }
    return parts;
  }

  /** Concatenates the parts into the object, streaming (one part's read buffer at a time), then removes them. */
  async completeMultipartUpload(key: string, uploadId: string, parts: UploadedPart[]): Promise<StoredVersion> {
    const dir = this.partsDirOf(key, uploadId);
    async function* joined() {
      for (const part of parts) yield* createReadStream(join(dir, partFileName(part.partNumber)));
    }
    await this.streamInto(key, [Readable.from(joined(), { objectMode: false })]);
    await rm(dir, { recursive: true, force: true });
    // As putStream: no link writes the keys joined here (evidence, or a sealed staging key).
    const stored = await this.stat(key);
    if (!stored) throw new Error(`The object ${key} vanished as it was stored`);
    return { version: stored.version };
  }

  async copyPart(
    source: { key: string; version: string },
    range: { start: number; end: number },
    target: { key: string; uploadId: string; partNumber: number },
  ): Promise<UploadedPart | null> {
    assertPart({ partNumber: target.partNumber, size: range.end - range.start });
    const dir = this.partsDirOf(target.key, target.uploadId);
    if (!(await isDirectory(dir))) throw new NoSuchUploadError(target.uploadId);
    const body = await this.read(source.key, { version: source.version, start: range.start, end: range.end });
    if (!body) return null;
    const partPath = join(dir, partFileName(target.partNumber));
    const md5 = createHash('md5');
    const counted = digestingStream(md5);
    await this.streamIntoPath(partPath, [body, counted.stream]);
    const sizeBytes = counted.sizeBytes();
    // A source shorter than the range: as S3's InvalidRange, not a part.
    if (sizeBytes !== range.end - range.start)
      throw new Error(`The source holds ${sizeBytes} bytes of the range [${range.start}, ${range.end})`);
    const etag = `"${md5.digest('hex')}"`;
    await writeFile(`${partPath}.etag`, etag);
    return { partNumber: target.partNumber, sizeBytes, etag };
  }

  /** The ETag of a part that arrived (what S3's UploadPart answers); null when there is none. */
  async partEtag(key: string, uploadId: string, partNumber: number): Promise<string | null> {
    if (!isSafeObjectKey(key) || !isLocalUploadId(uploadId) || !Number.isSafeInteger(partNumber)) return null;
    const path = join(this.partsDirOf(key, uploadId), `${partFileName(partNumber)}.etag`);
    return readFile(path, 'utf8').catch(() => null);
  }

  async abortMultipartUpload(key: string, uploadId: string): Promise<void> {
    await rm(this.partsDirOf(key, uploadId), { recursive: true, force: true });
  }

  /** The bytes of a signed, unexpired link; null otherwise. Whole in memory: tests only; downloads use openSigned. */
  async readSigned(key: string, expires: number, signature: string): Promise<Buffer | null> {
    if (!isSafeObjectKey(key) || !this.isValidLink(key, expires, signature)) return null;
    try {
      return await readFile(this.pathOf(key));
    } catch {
      return null;
    }
  }

  /**
   * The object of a signed, unexpired link, opened once (null otherwise, or when there is none):
   * the local server hashes it in a first pass and serves it in a second from the same open file,
   * so an object replaced on disk in between is not what gets served. The caller closes it.
   */
  async openSigned(key: string, expires: number, signature: string): Promise<OpenedObject | null> {
    if (!isSafeObjectKey(key) || !this.isValidLink(key, expires, signature)) return null;
    const file = await this.openFile(key);
    if (!file) return null;
    const { handle, size } = file;
    return {
      size,
      // Each pass reads from offset 0; the handle stays open until close().
      stream: () => handle.createReadStream({ start: 0, autoClose: false }),
      close: () => handle.close(),
    };
  }

  /** The object's file opened for reading, with its size; null when there is no such file. */
  private async openFile(key: string): Promise<{ handle: FileHandle; size: number } | null> {
    if (!isSafeObjectKey(key)) return null;
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch {
      return null;
    }
    const found = await handle.stat().catch(() => null);
    if (!found?.isFile()) {
      await handle.close();
      return null;
    }
    return { handle, size: found.size };
  }

  /** Whether `signature` signs `message` until `expires` (seconds), and that time has not passed; compared in constant time. */
  private isValidLink(message: string, expires: number, signature: string): boolean {
    if (!Number.isFinite(expires) || expires * 1000 < now().getTime()) return false;
    const expected = Buffer.from(this.sign(message, expires));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  private sign(key: string, expires: number): string {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest('base64url');
  }
}

/** What a signed upload to the directory store comes to: 'stored', or why not. */
export type SignedWriteOutcome =
  | 'stored'
  | 'forbidden'
  | 'missing-md5'
  | 'too-large'
  | 'incomplete'
  | 'bad-digest'
  | 'sealed';

/** The directory store's upload ids are UUIDs (they name a directory: nothing else gets near a path). */
const isLocalUploadId = (uploadId: string) =>
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(uploadId);

/** What a part link signs: the key, the upload, the part number and its exact size. */
const partMessage = (key: string, uploadId: string, part: { partNumber: number; size: number }) =>
  `PART\n${key}\n${uploadId}\n${part.partNumber}\n${part.size}`;

/** A part's file in its upload's directory: the number padded, so names sort as numbers. */
const partFileName = (partNumber: number) => String(partNumber).padStart(5, '0');

const isDirectory = (path: string) =>
  stat(path).then(
    (found) => found.isDirectory(),
    () => false,
  );

/** A file's version: an upload writes a new file and renames it into place, so a new inode. */
function fileVersion(found: { ino: bigint; size: bigint; mtimeNs: bigint }): string {
  return `file:${found.ino}:${found.size}:${found.mtimeNs}`;
}

let storage: ObjectStorage | undefined;

export function objectStorage(): ObjectStorage {
  storage ??= configuredStorage();
  return storage;
}

function configuredStorage(): ObjectStorage {
  const { STORAGE_BUCKET, WORK_BUCKET, DATA_DIR } = config();
  // Locally the links have a key of their own, never JWT_SECRET: one secret, one purpose.
  if (!STORAGE_BUCKET)
    return new DirectoryStorage(join(DATA_DIR, 'objects'), localSecret(DATA_DIR, 'object-link-secret'));
  // In the evidence bucket, staging uploads and generated documents would be kept for good.
  if (!WORK_BUCKET)
    throw new Error(
      'WORK_BUCKET must be set with STORAGE_BUCKET: staging and generated objects cannot go under Object Lock',
    );
  return new S3Storage({ evidence: STORAGE_BUCKET, work: WORK_BUCKET });
}

export function useObjectStorage(next: ObjectStorage | undefined): void {
  storage = next;
}
