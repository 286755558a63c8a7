import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { overrideConfig, parseConfig, publicBaseUrl, serverUrl } from '../../lib/config';
import { LocalMailSink } from '../../lib/mail/transport';
import { useObjectStorage } from '../../lib/storage';
import { createUser, emailsTo } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { uploadHeaders } from '../harness/uploads';
import { caseWithOwner } from '../harness/cases';

/**
 * Issue 13: links the service builds to itself (object downloads and uploads, sandbox checkout and
 * invoice pages) name the address the local server listens on unless PUBLIC_BASE_URL says
 * otherwise; APP_URL (the web app) is only for emailed links into the app.
 */

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

describe('publicBaseUrl (config)', () => {
  it('has no PUBLIC_BASE_URL by default; HOST defaults to 127.0.0.1 and APP_URL stays the web app', () => {
    const parsed = parseConfig({});
    expect(parsed.PUBLIC_BASE_URL).toBeUndefined();
    expect(parsed).toMatchObject({ HOST: '127.0.0.1', PORT: 3000, APP_URL: 'http://localhost:3000' });
    expect(parseConfig({ PUBLIC_BASE_URL: 'https://api.example.test' }).PUBLIC_BASE_URL).toBe(
      'https://api.example.test',
    );
  });

  it('defaults to HOST and PORT, not APP_URL', () => {
    restore = overrideConfig({
      PUBLIC_BASE_URL: undefined,
      HOST: '127.0.0.1',
      PORT: 4123,
      APP_URL: 'https://app.example.test',
    });
    expect(publicBaseUrl()).toBe('http://127.0.0.1:4123');
  });

  it('names a wildcard interface as localhost and brackets an IPv6 address', () => {
    expect(serverUrl('0.0.0.0', 8080)).toBe('http://localhost:8080');
    expect(serverUrl('::', 8080)).toBe('http://localhost:8080');
    expect(serverUrl('::1', 8080)).toBe('http://[::1]:8080');
    expect(serverUrl('dev.local', 8080)).toBe('http://dev.local:8080');
  });

  it('is PUBLIC_BASE_URL when set, without a trailing slash', () => {
    restore = overrideConfig({ PUBLIC_BASE_URL: 'https://api.example.test/v1/', HOST: '127.0.0.1', PORT: 4123 });
    expect(publicBaseUrl()).toBe('https://api.example.test/v1');
  });
});

describe('links built by the routes', () => {
  let server: Server;
  let base: string;
  let dataDir: string;
  let restoreDataDir: () => void;

  beforeAll(async () => {
    // Objects (uploads, the report PDF) in a folder of this test's own.
    dataDir = mkdtempSync(join(tmpdir(), 'self-links-'));
    restoreDataDir = overrideConfig({ DATA_DIR: dataDir });
    useObjectStorage(undefined);
    server = createLocalServer({ mailSink: new LocalMailSink() });
    // Port 0: the links must name the port actually chosen, which no configuration knows.
    base = await listen(server, 0);
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    restoreDataDir();
    useObjectStorage(undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const selectPlan = async () => {
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    // tier3: the first tier with billing reports (the download link test asks for one).
    const body = {
      tier: 'tier3',
      successUrl: 'https://app.example.test/done',
      cancelUrl: 'https://app.example.test/cancel',
    };
    return { owner, as, selected: expectData(await invoke(routes.selectPlan, { ...as, body })) };
  };

  it('points the sandbox checkout and invoice pages at the listening server, and they open there', async () => {
    const { as, selected } = await selectPlan();
    expect(selected.setupSessionUrl.startsWith(`${base}/_sandbox/checkout/`)).toBe(true);
    expect((await fetch(selected.setupSessionUrl)).status).toBe(200);
    const [row] = expectData(await invoke(routes.getReconciliation, as)).groups[0].rows;
    expect(row.hostedInvoiceUrl.startsWith(`${base}/_sandbox/invoices/`)).toBe(true);
    expect((await fetch(row.hostedInvoiceUrl)).status).toBe(200);
  });

  it('points upload links at the listening server, and the upload is stored there', async () => {
    const s = await caseWithOwner();
    const file = { name: 'photo.jpg', contentType: 'image/jpeg', size: 3 };
    const { uploads } = expectData(
      await invoke(routes.createAttachmentUploads, {
        token: s.owner.accessToken,
        organization: s.organizationId,
        query: { caseId: s.caseId },
        body: { files: [file] },
      }),
    );
    expect(uploads[0].url.startsWith(`${base}/_local/uploads/`)).toBe(true);
    const body = new Uint8Array([1, 2, 3]);
    const put = await fetch(uploads[0].url, { method: 'PUT', headers: uploadHeaders(uploads[0].headers, body), body });
    expect(put.status).toBe(200);
  });

  it('points download links at the listening server', async () => {
    const { owner } = await selectPlan();
    const file = expectData(
      await invoke(routes.createBillingReport, {
        token: owner.accessToken,
        organization: owner.organizationId,
        body: { format: 'pdf' },
      }),
    );
    expect(file.downloadUrl.startsWith(`${base}/_local/objects/`)).toBe(true);
    const download = await fetch(file.downloadUrl);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
  });

  it('uses PUBLIC_BASE_URL over the listening address, path prefix included', async () => {
    restore = overrideConfig({ PUBLIC_BASE_URL: 'https://api.example.test/v1' });
    const { selected } = await selectPlan();
    expect(selected.setupSessionUrl).toMatch(/^https:\/\/api\.example\.test\/v1\/_sandbox\/checkout\/cs_sandbox_/);
  });

  it('keeps APP_URL for emailed links into the web app only', async () => {
    const user = await createUser();
    const [verification] = emailsTo(user.email);
    expect(/https?:\/\/\S+/.exec(verification!.text)![0].startsWith('https://app.example.test/')).toBe(true);
    const { selected } = await selectPlan();
    expect(selected.setupSessionUrl.startsWith('https://app.example.test')).toBe(false);
  });
});
