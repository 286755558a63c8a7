import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalServer, listen } from '../../infra/local/app';
import { overrideConfig } from '../../lib/config';
import { LocalMailSink } from '../../lib/mail/transport';
import { objectStorage, useObjectStorage, type DirectoryStorage } from '../../lib/storage';

/**
 * Issue 29 (9): the local upload route is as strict as S3 under Object Lock: Content-MD5 is
 * required (S3: 400 InvalidRequest), and the body must be exactly the signed length (shorter: 400
 * as S3's IncompleteBody; longer: 413). Nothing is stored from a refused upload.
 */

let server: Server;
let dataDir: string;
let restoreConfig: () => void;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'strict-uploads-'));
  restoreConfig = overrideConfig({ DATA_DIR: dataDir, PUBLIC_BASE_URL: undefined });
  useObjectStorage(undefined);
  server = createLocalServer({ mailSink: new LocalMailSink() });
  // Upload links name the address listened on.
  await listen(server, 0);
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  restoreConfig();
  useObjectStorage(undefined);
  rmSync(dataDir, { recursive: true, force: true });
});

const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('base64');
const objectPath = (key: string) => join(dataDir, 'objects', ...key.split('/'));
/** The files left in the key's folder: no object and no partial file after a refusal. */
const leftIn = (key: string) => {
  const folder = join(objectPath(key), '..');
  return existsSync(folder) ? readdirSync(folder) : [];
};

async function linkFor(key: string, size: number): Promise<string> {
  return objectStorage().uploadUrl(key, { contentType: 'text/csv', size }, 600);
}

const put = (url: string, body: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'PUT', headers: { 'content-type': 'text/csv', ...headers }, body });

describe('PUT /_local/uploads/{key}', () => {
  const body = new TextEncoder().encode('a,b\n1,2\n');

  it('stores a body of exactly the signed length with its Content-MD5', async () => {
    const key = 'cases/exact/imports/a.csv';
    const response = await put(await linkFor(key, body.length), body, { 'content-md5': md5(body) });
    expect(response.status, await response.text()).toBe(200);
    expect(await objectStorage().size(key)).toBe(body.length);
  });

  it('answers 400 naming the missing Content-MD5 header, storing nothing', async () => {
    const key = 'cases/no-md5/imports/a.csv';
    const response = await put(await linkFor(key, body.length), body);
    const answer = (await response.json()) as { error: { code: string; message: string } };
    expect(response.status).toBe(400);
    expect(answer.error.code).toBe('BAD_REQUEST');
    expect(answer.error.message).toContain('Content-MD5');
    expect(leftIn(key)).toEqual([]);
  });

  it('answers 400 for a body shorter than the signed length (S3: IncompleteBody), storing nothing', async () => {
    const key = 'cases/short/imports/a.csv';
    const short = body.subarray(0, body.length - 1);
    const response = await put(await linkFor(key, body.length), short, { 'content-md5': md5(short) });
    const answer = (await response.json()) as { error: { code: string; message: string } };
    expect(response.status).toBe(400);
    expect(answer.error.code).toBe('BAD_REQUEST');
    expect(answer.error.message).toMatch(/shorter|IncompleteBody/);
    expect(leftIn(key)).toEqual([]);
  });

  it('keeps refusing a longer body (413), a wrong digest (400) and another content type (403)', async () => {
    const key = 'cases/others/imports/a.csv';
    const link = await linkFor(key, body.length);
    const longer = new Uint8Array([...body, 0x41]);
    expect((await put(link, longer, { 'content-md5': md5(longer) })).status).toBe(413);
    expect((await put(link, body, { 'content-md5': md5(longer) })).status).toBe(400);
    expect((await put(link, body, { 'content-md5': md5(body), 'content-type': 'text/html' })).status).toBe(403);
    expect(leftIn(key)).toEqual([]);
  });

  it('checks the link before the header: a forged link without Content-MD5 is 403', async () => {
    const link = new URL(await linkFor('cases/forged/imports/a.csv', body.length));
    link.searchParams.set('signature', 'forged');
    expect((await put(link.toString(), body)).status).toBe(403);
  });
});

describe('DirectoryStorage.writeSignedStream', () => {
  it("answers 'missing-md5' and 'incomplete' without storing anything", async () => {
    const storage = objectStorage() as DirectoryStorage;
    const key = 'cases/s2/imports/direct.csv';
    const url = new URL(await linkFor(key, 8));
    const link = {
      expires: Number(url.searchParams.get('expires')),
      size: 8,
      signature: url.searchParams.get('signature') ?? '',
      contentType: 'text/csv',
    };
    const seven = Buffer.from('a,b\n1,2');
    const missing = await storage.writeSignedStream(key, link, Readable.from([Buffer.from('a,b\n1,2\n')]));
    const incomplete = await storage.writeSignedStream(
      key,
      { ...link, contentMd5: md5(seven) },
      Readable.from([seven]),
    );
    expect([missing, incomplete]).toEqual(['missing-md5', 'incomplete']);
    expect(leftIn(key)).toEqual([]);
  });
});
