import { createHmac } from 'node:crypto';
import type { Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLocalServer, listen } from '../../infra/local/app';
import { overrideConfig } from '../../lib/config';
import { LocalMailSink } from '../../lib/mail/transport';
import { DirectoryStorage, objectStorage, useObjectStorage } from '../../lib/storage';
import { uploadHeaders } from '../harness/uploads';

/**
 * Issue 12 (6): local signed object links are signed with a random secret kept in DATA_DIR (not a
 * key anyone can derive from the path), and object keys never resolve outside DATA_DIR/objects.
 */

let server: Server;
let base: string;
let dataDir: string;
let restoreConfig: () => void;

const sign = (secret: string, message: string, expires: number) =>
  createHmac('sha256', secret).update(`${message}\n${expires}`).digest('base64url');
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

beforeAll(async () => {
  // A local run: no JWT_SECRET, objects under a DATA_DIR of its own.
  dataDir = mkdtempSync(join(tmpdir(), 'signed-links-'));
  restoreConfig = overrideConfig({
    DATA_DIR: dataDir,
    JWT_SECRET: undefined,
    PUBLIC_BASE_URL: 'http://localhost:3000',
  });
  useObjectStorage(undefined);
  server = createLocalServer({ mailSink: new LocalMailSink() });
  base = await listen(server, 0);
});

afterEach(() => useObjectStorage(undefined));

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  restoreConfig();
  useObjectStorage(undefined);
  rmSync(dataDir, { recursive: true, force: true });
});

const localPath = (url: string) => {
  const parsed = new URL(url);
  return `${base}${parsed.pathname}${parsed.search}`;
};

describe('local signed object links', () => {
  it('refuses a download link forged with the key derived from DATA_DIR', async () => {
    await objectStorage().put('reports/secret.pdf', new TextEncoder().encode('evidence'), 'application/pdf');
    const expires = inAnHour();
    const forged = sign(`local-objects:${dataDir}`, 'reports/secret.pdf', expires);
    const response = await fetch(`${base}/_local/objects/reports/secret.pdf?expires=${expires}&signature=${forged}`);
    expect(response.status).toBe(403);
  });

  it('refuses an upload link forged with the key derived from DATA_DIR, writing nothing', async () => {
    const expires = inAnHour();
    const forged = sign(`local-objects:${dataDir}`, 'PUT\ncases/x/forged.bin\napplication/octet-stream\n3', expires);
    const response = await fetch(
      `${base}/_local/uploads/cases/x/forged.bin?expires=${expires}&size=3&signature=${forged}`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: new Uint8Array([1, 2, 3]),
      },
    );
    expect(response.status).toBe(403);
    expect(existsSync(join(dataDir, 'objects', 'cases', 'x', 'forged.bin'))).toBe(false);
  });

  it('signs with a random secret generated once into DATA_DIR, so links survive a restart', async () => {
    await objectStorage().put('reports/kept.pdf', new TextEncoder().encode('kept'), 'application/pdf');
    const link = await objectStorage().downloadUrl('reports/kept.pdf', 600);
    const secretFiles = ['object-link-secret'].filter((name) => existsSync(join(dataDir, name)));
    expect(secretFiles).toEqual(['object-link-secret']);
    const secret = readFileSync(join(dataDir, 'object-link-secret'));
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(statSync(join(dataDir, 'object-link-secret')).mode & 0o077).toBe(0);
    // A "restart": a fresh storage object over the same DATA_DIR accepts the earlier link.
    useObjectStorage(undefined);
    const response = await fetch(localPath(link));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('kept');
    expect(readFileSync(join(dataDir, 'object-link-secret')).equals(secret)).toBe(true);
  });

  it('round-trips an upload link made by the storage', async () => {
    const link = await objectStorage().uploadUrl('cases/c1/photo.jpg', { contentType: 'image/jpeg', size: 3 }, 600);
    const body = new Uint8Array([7, 8, 9]);
    const response = await fetch(localPath(link), {
      method: 'PUT',
      headers: uploadHeaders({ 'content-type': 'image/jpeg' }, body),
      body,
    });
    expect(response.status).toBe(200);
    expect(await objectStorage().size('cases/c1/photo.jpg')).toBe(3);
  });
});

describe('object keys stay inside the objects folder', () => {
  const root = () => join(dataDir, 'objects');
  const SECRET = 'a-test-secret-for-key-checks';
  const storage = () => new DirectoryStorage(root(), SECRET);
  const escaping = [
    '../objects_sibling/x',
    '../x',
    'a/../../objects_sibling/x',
    '/etc/passwd',
    'a\\..\\..\\x',
    'a//b',
    './a',
    'a/./b',
    'a/',
    '',
    'a/..',
  ];

  it.each(escaping)('refuses to put %j', async (key) => {
    await expect(storage().put(key, new Uint8Array([1]))).rejects.toThrow();
    expect(existsSync(join(dataDir, 'objects_sibling'))).toBe(false);
  });

  it.each(escaping)('refuses to make links for %j', async (key) => {
    await expect(storage().downloadUrl(key, 60)).rejects.toThrow();
    await expect(storage().uploadUrl(key, { contentType: 'text/plain', size: 1 }, 60)).rejects.toThrow();
  });

  it('refuses a correctly signed upload and download of ../objects_sibling/x', async () => {
    const key = '../objects_sibling/x';
    const expires = inAnHour();
    const outcome = await storage().writeSignedStream(
      key,
      { expires, size: 1, signature: sign(SECRET, `PUT\n${key}\ntext/plain\n1`, expires), contentType: 'text/plain' },
      Readable.from([Buffer.from('x')]),
    );
    expect(outcome).toBe('forbidden');
    expect(existsSync(join(dataDir, 'objects_sibling', 'x'))).toBe(false);
    expect(await storage().readSigned(key, expires, sign(SECRET, key, expires))).toBeNull();
    expect(await storage().size(key)).toBeNull();
  });

  it('refuses ../objects_sibling/x through the local server routes', async () => {
    // A file where the escaping key points, as another tenant's folder would be.
    const sibling = join(dataDir, 'objects_sibling');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(sibling, { recursive: true });
    writeFileSync(join(sibling, 'x'), 'outside');
    try {
      const expires = inAnHour();
      const download = await fetch(`${base}/_local/objects/..%2Fobjects_sibling/x?expires=${expires}&signature=x`);
      expect(download.status).toBe(403);
      const upload = await fetch(
        `${base}/_local/uploads/..%2Fobjects_sibling/x?expires=${expires}&size=1&signature=x`,
        {
          method: 'PUT',
          headers: { 'content-type': 'text/plain' },
          body: 'y',
        },
      );
      expect(upload.status).toBe(403);
      expect(readFileSync(join(sibling, 'x'), 'utf8')).toBe('outside');
      expect((await fetch(`${base}/_local/objects/%E0%A4%A?expires=${expires}&signature=x`)).status).toBe(403);
    } finally {
      rmSync(sibling, { recursive: true, force: true });
    }
  });

  it('still stores and reads ordinary nested keys', async () => {
    await storage().put('cases/abc/notes/photo 1.jpg', new Uint8Array([1, 2]));
    expect(await storage().size('cases/abc/notes/photo 1.jpg')).toBe(2);
  });
});
