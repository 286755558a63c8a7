import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { addSeconds, now } from '../clock';
import { selfLink } from '../config';
import { digestingStream } from './digesting-stream';
import { assertSafeObjectKey, isSafeObjectKey } from './keys';
import {
  assertByteOffset,
  assertPart,
  MAX_PARTS,
  NoSuchUploadError,
  type ObjectStat,
  type ObjectStorage,
  type OpenedObject,
  type PartSpec,
  type ReadOptions,
  type StoredVersion,
  type UploadedPart,
} from './object-storage';

/** The 16 bytes a Content-MD5 header carries (base64, as S3 takes it); null when it is not that. */
function md5Digest(header: string): Buffer | null {
  const trimmed = header.trim();
  if (!/^[A-Za-z0-9+/]{22}==$/.test(trimmed)) return null;
  return Buffer.from(trimmed, 'base64');
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
