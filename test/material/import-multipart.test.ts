import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { testClock } from '../../lib/clock';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { evidenceImports, organizationPlans, storageReservations } from '../../lib/db/schema';
import { drainLocalImports } from '../../lib/material/imports';
import { partPlan } from '../../lib/material/imports/multipart';
import { removeLapsedUploads } from '../../lib/material/lapsed-uploads';
import { objectStorage } from '../../lib/storage';
import { expectData, expectError, invoke } from '../harness/invoke';
import { mailSink } from '../harness/setup';
import { uploadHeaders } from '../harness/uploads';
import { asOwner, importFlow, mboxImportBody, mboxMessage, type Setup, sha256 } from './import-flow';
import { caseWithOwner } from '../harness/cases';

/**
 * Issue 29, item 8: files larger than one PUT upload in parts (multipart), through the local
 * server's stand-in for S3's protocol: parts signed on demand, listed to resume a dropped upload,
 * completed at /start. Parts are 64 bytes here (IMPORT_MULTIPART_PART_BYTES), 64 MiB and up in use.
 */

const PART = 64;
let server: Server;
let base: string;
let restoreConfig: () => void;
const flow = importFlow(() => base);

beforeAll(async () => {
  restoreConfig = overrideConfig({ IMPORT_MULTIPART_PART_BYTES: PART });
  server = createLocalServer({ mailSink });
  base = await listen(server, 0);
});

afterEach(() => drainLocalImports());

afterAll(async () => {
  restoreConfig();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const FILE = [1, 2, 3, 4].map((n) => mboxMessage(`m${n}`, `Message ${n}`)).join('');
const BYTES = Buffer.from(FILE);
const PART_COUNT = Math.ceil(BYTES.length / PART);
const partBytes = (partNumber: number) => BYTES.subarray((partNumber - 1) * PART, partNumber * PART);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

interface PartLink {
  partNumber: number;
  sizeBytes: number;
  url: string;
  headers: Record<string, string>;
}

async function createMultipart(s: Setup) {
  return expectData(
    await invoke(routes.createImport, {
      ...asOwner(s),
      path: { caseId: s.caseId },
      body: { ...mboxImportBody(FILE), upload: 'multipart' },
    }),
    201,
  );
}

const signParts = (s: Setup, importId: string, partNumbers: number[]) =>
  invoke(routes.signImportParts, { ...asOwner(s), path: flow.pathOf(s, importId), body: { partNumbers } });

const listParts = (s: Setup, importId: string) =>
  invoke(routes.listImportParts, { ...asOwner(s), path: flow.pathOf(s, importId) });

/** PUTs `body` to a part link as a client does (with Content-MD5, without the link's length header). */
function putPart(url: string, body: Uint8Array, headers: Record<string, string> = {}) {
  return fetch(flow.onServer(url), { method: 'PUT', headers: uploadHeaders(headers, body), body });
}

async function uploadParts(s: Setup, importId: string, partNumbers: number[]) {
  const { parts } = expectData(await signParts(s, importId, partNumbers));
  for (const part of parts as PartLink[]) {
    const stored = await putPart(part.url, partBytes(part.partNumber));
    expect(stored.status, await stored.text()).toBe(200);
    // As S3's UploadPart: the part's ETag, its MD5.
    expect(stored.headers.get('etag')).toBe(`"${createHash('md5').update(partBytes(part.partNumber)).digest('hex')}"`);
  }
  return parts as PartLink[];
}

describe('a file uploaded in parts through the local server', () => {
  it('resumes after a dropped connection: the parts that arrived are listed, the rest sent, start completes it and the worker imports it', async () => {
    const s = await caseWithOwner();
    const created = await createMultipart(s);
    expect(created.upload).toMatchObject({ method: 'MULTIPART', partSize: PART, partCount: PART_COUNT });
    expect(created.upload.partsUrl).toMatch(new RegExp(`/cases/${s.caseId}/imports/${created.import.id}/parts$`));
    expect(created.upload).not.toHaveProperty('url');

    // The first half goes up, then the connection "drops".
    const half = Math.floor(PART_COUNT / 2);
    await uploadParts(s, created.import.id, range(1, half));
    const arrived = expectData(await listParts(s, created.import.id));
    expect(arrived).toMatchObject({ partSize: PART, partCount: PART_COUNT });
    expect(arrived.parts.map((p: { partNumber: number }) => p.partNumber)).toEqual(range(1, half));
    expect(arrived.parts[0]).toMatchObject({
      partNumber: 1,
      sizeBytes: PART,
      etag: expect.stringMatching(/^"[0-9a-f]{32}"$/),
    });

    // Starting now names what is missing.
    const early = await invoke(routes.startImport, { ...asOwner(s), path: flow.pathOf(s, created.import.id) });
    expectError(early, 409, 'UPLOAD_INCOMPLETE');
    expect(early.body.error.message).toContain(`parts ${range(half + 1, PART_COUNT).join(', ')}`);

    // The client resumes with the parts not listed; the last one is the remainder.
    const rest = await uploadParts(s, created.import.id, range(half + 1, PART_COUNT));
    expect(rest.at(-1)!.sizeBytes).toBe(BYTES.length - PART * (PART_COUNT - 1));

    const done = await flow.startAndWait(s, created.import.id);
    expect(done).toMatchObject({ status: 'succeeded', sha256: sha256(FILE), progress: { itemsImported: 4 } });
    // The parts are gone once joined: no upload is left to list.
    const [row] = await db().select().from(evidenceImports).where(eqId(created.import.id));
    expect(await objectStorage().listParts(row!.stagingKey!, row!.multipartUploadId!)).toBeNull();
  });

  it('a part link writes only its own part of its own upload, at its length, with its Content-MD5', async () => {
    const s = await caseWithOwner();
    const created = await createMultipart(s);
    const other = await createMultipart(s);
    const [one] = expectData(await signParts(s, created.import.id, [1])).parts as PartLink[];
    const [otherOne] = expectData(await signParts(s, other.import.id, [1])).parts as PartLink[];

    const retarget = (url: string, name: string, value: string) => {
      const link = new URL(url);
      link.searchParams.set(name, value);
      return link.toString();
    };
    // Another part number, or the other import's upload id, under this link's signature.
    expect((await putPart(retarget(one!.url, 'partNumber', '2'), partBytes(2))).status).toBe(403);
    const otherUploadId = new URL(otherOne!.url).searchParams.get('uploadId')!;
    expect((await putPart(retarget(one!.url, 'uploadId', otherUploadId), partBytes(1))).status).toBe(403);
    // Another length: a different signed size, or a body shorter than it.
    expect((await putPart(retarget(one!.url, 'size', '10'), partBytes(1).subarray(0, 10))).status).toBe(403);
    expect((await putPart(one!.url, partBytes(1).subarray(0, 10))).status).toBe(400);
    // No Content-MD5.
    const bare = await fetch(flow.onServer(one!.url), { method: 'PUT', body: partBytes(1) });
    expect(bare.status).toBe(400);

    expect(expectData(await listParts(s, created.import.id)).parts).toEqual([]);
    expect(expectData(await listParts(s, other.import.id)).parts).toEqual([]);
  });

  it('400 names each bad part number; single-PUT and started imports are 409', async () => {
    const s = await caseWithOwner();
    const created = await createMultipart(s);
    expectError(await signParts(s, created.import.id, [PART_COUNT + 1]), 400, 'VALIDATION_FAILED', [
      'body.partNumbers.0',
    ]);
    expectError(await signParts(s, created.import.id, [0]), 400, 'VALIDATION_FAILED', ['body.partNumbers.0']);
    expectError(await signParts(s, created.import.id, []), 400, 'VALIDATION_FAILED', ['body.partNumbers']);
    expectError(await signParts(s, created.import.id, range(1, 101)), 400, 'VALIDATION_FAILED', ['body.partNumbers']);
    expectError(await signParts(s, created.import.id, [1, 1]), 400, 'VALIDATION_FAILED', ['body.partNumbers']);

    const single = await flow.createUploaded(s, FILE);
    expect(single.upload.method).toBe('PUT');
    expectError(await signParts(s, single.import.id, [1]), 409, 'IMPORT_NOT_MULTIPART');
    expectError(await listParts(s, single.import.id), 409, 'IMPORT_NOT_MULTIPART');

    const parts = await uploadParts(s, created.import.id, range(1, PART_COUNT));
    await flow.startAndWait(s, created.import.id);
    expectError(await signParts(s, created.import.id, [1]), 409, 'IMPORT_ALREADY_STARTED');
    expectError(await listParts(s, created.import.id), 409, 'IMPORT_ALREADY_STARTED');
    // A part link after start changes nothing.
    expect((await putPart(parts[0]!.url, partBytes(1))).status).toBe(409);
  });

  it('cancel of an import awaiting its parts aborts the upload: the parts are removed', async () => {
    const s = await caseWithOwner();
    const created = await createMultipart(s);
    const [part] = await uploadParts(s, created.import.id, [1]);
    const [row] = await db().select().from(evidenceImports).where(eqId(created.import.id));
    expect(row!.multipartUploadId).toBeTruthy();
    expect(await objectStorage().listParts(row!.stagingKey!, row!.multipartUploadId!)).toHaveLength(1);

    expectData(await invoke(routes.cancelImport, { ...asOwner(s), path: flow.pathOf(s, created.import.id) }));
    expect(await objectStorage().listParts(row!.stagingKey!, row!.multipartUploadId!)).toBeNull();
    expect((await putPart(part!.url, partBytes(1))).status).toBe(409);
  });
});

describe('an upload in parts never started', () => {
  afterEach(() => testClock.reset());

  it('is kept a day for its parts to arrive, then maintenance removes its parts with it', async () => {
    const s = await caseWithOwner();
    const created = await createMultipart(s);
    // A day to send the parts, not the hour of a single link.
    expect(Date.parse(created.upload.expiresAt) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    await uploadParts(s, created.import.id, [1]);
    const [row] = await db().select().from(evidenceImports).where(eqId(created.import.id));

    testClock.advance(2 * 24 * 3600 + 60);
    await removeLapsedUploads();

    expect(await objectStorage().listParts(row!.stagingKey!, row!.multipartUploadId!)).toBeNull();
  });
});

describe('a file over 5 GiB', () => {
  it('goes in parts without asking, in parts S3 takes (at least 64 MiB, at most 10,000), its size reserved', async () => {
    const s = await caseWithOwner();
    const size = 6 * 1024 ** 3 + 1;
    await db()
      .update(organizationPlans)
      .set({ storageBytes: 10 * 1024 ** 3 })
      .where(eq(organizationPlans.organizationId, s.organizationId));
    const created = expectData(
      await invoke(routes.createImport, {
        ...asOwner(s),
        path: { caseId: s.caseId },
        body: { ...mboxImportBody(FILE), sizeBytes: size },
      }),
      201,
    );
    expect(created.upload).toMatchObject({ method: 'MULTIPART', partSize: 64 * 1024 ** 2, partCount: 97 });
    const reserved = await db().select().from(storageReservations).where(eq(storageReservations.caseId, s.caseId));
    expect(reserved.map((r) => r.bytes)).toEqual([size]);
    const { parts } = expectData(await signParts(s, created.import.id, [96, 97]));
    expect(parts.map((p: { sizeBytes: number }) => p.sizeBytes)).toEqual([64 * 1024 ** 2, 1]);
    // Past 5 TiB: S3 keeps no larger object.
    expectError(
      await invoke(routes.createImport, {
        ...asOwner(s),
        path: { caseId: s.caseId },
        body: { ...mboxImportBody(FILE), sizeBytes: 5 * 1024 ** 4 + 1 },
      }),
      400,
      'VALIDATION_FAILED',
      ['body.sizeBytes'],
    );
  });
});

describe('part sizes', () => {
  it('are at least 64 MiB, whole MiB, and never more than 10,000 parts up to 5 TiB', () => {
    restoreConfig();
    try {
      const MiB = 1024 ** 2;
      expect(partPlan(6 * 1024 ** 3)).toEqual({ partSize: 64 * MiB, partCount: 96 });
      expect(partPlan(5 * 1024 ** 4)).toEqual({ partSize: 525 * MiB, partCount: 9987 });
      expect(partPlan(1)).toEqual({ partSize: 64 * MiB, partCount: 1 });
    } finally {
      restoreConfig = overrideConfig({ IMPORT_MULTIPART_PART_BYTES: PART });
    }
  });
});

const eqId = (id: string) => eq(evidenceImports.id, id);
