import type { Readable } from 'node:stream';

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

/** A read offset every store accepts: a non-negative safe integer. */
export function assertByteOffset(start: number): void {
  if (!Number.isSafeInteger(start) || start < 0) throw new Error(`Invalid read offset ${start}`);
}

/** A part every store accepts: its number 1 to MAX_PARTS, its size 1 to MAX_PART_BYTES. */
export function assertPart(part: PartSpec): void {
  if (!Number.isSafeInteger(part.partNumber) || part.partNumber < 1 || part.partNumber > MAX_PARTS)
    throw new Error(`A part number is 1 to ${MAX_PARTS}, not ${part.partNumber}`);
  if (!Number.isSafeInteger(part.size) || part.size < 1 || part.size > MAX_PART_BYTES)
    throw new Error(`A part takes 1 to ${MAX_PART_BYTES} bytes, not ${part.size}`);
}
