import { Readable } from 'node:stream';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { lazyRetrying } from '../lazy';
import { traced } from '../observability/tracing';
import { isWorkBucketKey } from './keys';
import {
  assertByteOffset,
  assertPart,
  MAX_PARTS,
  MAX_UPLOAD_LINK_BYTES,
  NoSuchUploadError,
  type ObjectStat,
  type ObjectStorage,
  type PartSpec,
  type PutOptions,
  type ReadOptions,
  type StoredVersion,
  type UploadedPart,
} from './object-storage';

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

/** What S3 answers for a key that is not there: 404, or 403 without s3:ListBucket on the bucket. */
function isMissingObject(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status === 404 || status === 403;
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
