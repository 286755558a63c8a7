import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { db } from '../../lib/db/client';
import { evidenceImports } from '../../lib/db/schema';
import { drainLocalImports } from '../../lib/material/imports';
import { useLocalImportRunner } from '../../lib/material/imports/queue';
import { runImport } from '../../lib/material/imports/run';
import { objectStorage, stagingKeyOf } from '../../lib/storage';
import { now } from '../../lib/clock';
import { expectData, invoke } from '../harness/invoke';
import { mailSink } from '../harness/setup';
import { uploadHeaders } from '../harness/uploads';
import type { caseWithOwner } from '../harness/cases';

/**
 * An import's journey through the real handlers and a local server (create, PUT the file to its
 * link, start, the in-process worker), for the test files that need one: the server is theirs.
 */
export type Setup = Awaited<ReturnType<typeof caseWithOwner>>;

export const sha256 = (text: string | Uint8Array) => createHash('sha256').update(text).digest('hex');

/** One mbox message with a Message-ID, a date, two parties and `subject`; `headers` ends in a newline. */
export const mboxMessage = (id: string, subject: string, headers = '') =>
  `From sender@example Mon Nov  2 10:00:00 2026\nMessage-ID: <${id}@lee-law.example>\nDate: Mon, 02 Nov 2026 10:00:00 +0000\nFrom: Ann Lee <ann@lee-law.example>\nTo: Bob Roe <bob@roe.example>\nSubject: ${subject}\n${headers}\n${subject} body.\n\n`;

/** A thread of two messages and one of its own: the mailbox the route tests import. */
export const MBOX = [
  mboxMessage('root', 'Settlement'),
  mboxMessage('reply', 'Re: Settlement', 'In-Reply-To: <root@lee-law.example>\nReferences: <root@lee-law.example>\n'),
  mboxMessage('other', 'Filing'),
].join('');

/** Three network messages in two conversations (one without a title). */
export const CSV = [
  'CONVERSATION ID,CONVERSATION TITLE,FROM,TO,DATE,SUBJECT,CONTENT,FOLDER',
  'c1,Offer,Ann Lee,Bob Roe,2026-11-02 10:00:00 UTC,Offer,We offer terms,INBOX',
  'c1,Offer,Bob Roe,Ann Lee,2026-11-02 11:00:00 UTC,Re: Offer,Counter terms,INBOX',
  'c2,,Carl,Ann Lee,2026-11-03 09:00:00 UTC,,Hello,INBOX',
].join('\n');

/** Three support tickets of a chat platform. */
export const TICKETS = JSON.stringify([
  { id: 101, subject: 'Refund', status: 'closed', created_at: '2026-11-01T10:00:00Z', comments: [] },
  { id: 102, subject: 'Account', status: 'open', created_at: '2026-11-02T10:00:00Z', comments: [] },
  { id: 103, subject: 'Billing', status: 'open', created_at: '2026-11-03T10:00:00Z', comments: [] },
]);

export type ImportKind = 'email' | 'professional-network' | 'chat-platform';

/** The file each kind of import is tested with. */
export const IMPORT_FILES: Record<ImportKind, { name: string; contentType: string; text: string }> = {
  email: { name: 'client mailbox.mbox', contentType: 'application/mbox', text: MBOX },
  'professional-network': { name: 'messages.csv', contentType: 'text/csv', text: CSV },
  'chat-platform': { name: 'tickets.json', contentType: 'application/json', text: TICKETS },
};

/** The body of POST /cases/{caseId}/imports for `text` of `kind` (network and chat imports name a profile). */
export function importBody(kind: ImportKind, text: string, name = IMPORT_FILES[kind].name) {
  return {
    kind,
    fileName: name,
    contentType: IMPORT_FILES[kind].contentType,
    sizeBytes: Buffer.byteLength(text),
    ...(kind === 'email' ? {} : { profile: 'ann.lee' }),
  };
}

export const asOwner = (s: Setup) => ({ token: s.owner.accessToken, organization: s.organizationId });

export function mboxImportBody(text: string, fileName = 'client.mbox') {
  return { kind: 'email' as const, fileName, contentType: 'application/mbox', sizeBytes: Buffer.byteLength(text) };
}

/**
 * Creates an email import of `text` and stores the file at its staging key, as a PUT through its
 * upload link would (no server needed): the create answer.
 */
export async function createStaged(s: Setup, text: string) {
  const created = expectData(
    await invoke(routes.createImport, {
      ...asOwner(s),
      path: { caseId: s.caseId },
      body: mboxImportBody(text, 'box.mbox'),
    }),
    201,
  );
  const [row] = await db()
    .select({ key: evidenceImports.stagingKey })
    .from(evidenceImports)
    .where(eq(evidenceImports.id, created.import.id));
  await objectStorage().put(row!.key!, new TextEncoder().encode(text), 'application/mbox');
  return created;
}

export function importFlow(base: () => string) {
  /** The link on the test's server (links name PUBLIC_BASE_URL, the configured local server). */
  const onServer = (url: string) => {
    const link = new URL(url);
    return `${base()}${link.pathname}${link.search}`;
  };

  /** PUTs `body` as a client does (with Content-MD5): the response. */
  const put = (link: { url: string; headers: Record<string, string> }, body: string | Uint8Array) => {
    const { 'content-length': _length, ...headers } = link.headers;
    return fetch(onServer(link.url), { method: 'PUT', headers: uploadHeaders(headers, body), body });
  };

  /** Uploads `body` through the link of a create answer, as a client does. */
  async function upload(created: { upload: { url: string; headers: Record<string, string> } }, body: string) {
    const stored = await put(created.upload, body);
    expect(stored.status, await stored.text()).toBe(200);
  }

  /** Creates an email import of `text` and uploads it: the create answer. */
  async function createUploaded(s: Setup, text: string) {
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: mboxImportBody(text) }),
      201,
    );
    const stored = await put(created.upload, text);
    expect(stored.status, await stored.text()).toBe(200);
    return created;
  }

  const pathOf = (s: Setup, importId: string) => ({ caseId: s.caseId, importId });

  /** The import as GET answers it. */
  const read = async (s: Setup, importId: string) =>
    expectData(await invoke(routes.getImport, { ...asOwner(s), path: pathOf(s, importId) }));

  /** Starts the import and waits for the in-process worker: the import as GET answers it then. */
  async function startAndWait(
    s: Setup,
    importId: string,
    route: typeof routes.startImport | typeof routes.retryImport = routes.startImport,
  ) {
    expectData(await invoke(route, { ...asOwner(s), path: pathOf(s, importId) }), 202);
    await drainLocalImports();
    return read(s, importId);
  }

  /** Starts the import with no worker in this process: it stays queued for the test to run the worker (runImport). */
  const startQueued = (s: Setup, importId: string) =>
    withoutWorker(async () =>
      expectData(await invoke(routes.startImport, { ...asOwner(s), path: pathOf(s, importId) }), 202),
    );

  return { onServer, put, upload, createUploaded, pathOf, read, startAndWait, startQueued };
}

/**
 * A local server for the test file's uploads (started before its tests, closed after them, the
 * in-process worker drained after each test) and the import flow on it.
 */
export function importServer() {
  let server: Server;
  let base = '';
  beforeAll(async () => {
    server = createLocalServer({ mailSink });
    base = await listen(server, 0);
  });
  afterEach(() => drainLocalImports());
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return importFlow(() => base);
}

/** Runs `act` with no worker in this process: an import it queues waits for the test to run the worker (runImport). */
export async function withoutWorker<T>(act: () => Promise<T>): Promise<T> {
  useLocalImportRunner(undefined);
  try {
    return await act();
  } finally {
    useLocalImportRunner((importId) => runImport(importId));
  }
}

/**
 * An email import of the case written straight into the table (awaiting its upload, unless
 * `values` says otherwise): what the security suites and state tests act on without an upload.
 */
export async function importRowOf(
  caseId: string,
  organizationId: string,
  values: Partial<typeof evidenceImports.$inferInsert> = {},
) {
  const [row] = await db()
    .insert(evidenceImports)
    .values({
      organizationId,
      caseId,
      kind: 'email',
      fileName: 'box.mbox',
      contentType: 'application/mbox',
      sizeBytes: 1000,
      objectKey: `cases/${caseId}/imports/${crypto.randomUUID()}-box.mbox`,
      ...values,
    })
    .returning();
  return row!;
}

/** An import of the case in `status` with MBOX stored as its file: what start and retry act on. */
export async function storedImport(caseId: string, organizationId: string, status: 'awaiting_upload' | 'failed') {
  const row = await importRowOf(caseId, organizationId, {
    sizeBytes: Buffer.byteLength(MBOX),
    status,
    ...(status === 'failed' ? { errorCode: 'INTERNAL', errorMessage: 'stopped', startedAt: now() } : {}),
  });
  await objectStorage().put(row.objectKey, Buffer.from(MBOX), 'application/mbox');
  return row;
}

/** An email import of the case awaiting its upload in parts (an open multipart upload): its path. */
export async function multipartImportOf(caseId: string, organizationId: string) {
  const objectKey = `cases/${caseId}/imports/${crypto.randomUUID()}-box.mbox`;
  const stagingKey = stagingKeyOf(objectKey);
  const multipartUploadId = await objectStorage().createMultipartUpload(stagingKey, 'application/mbox');
  const row = await importRowOf(caseId, organizationId, { objectKey, stagingKey, multipartUploadId });
  return { path: { caseId, importId: row.id } };
}
