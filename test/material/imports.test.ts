import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import {
  auditEvents,
  cases,
  emails,
  evidenceImports,
  evidenceObjects,
  networkMessages,
  organizationPlans,
  storageReservations,
  supportTickets,
} from '../../lib/db/schema';
import { drainLocalImports, requeueStalledImports } from '../../lib/material/imports';
import { runImport } from '../../lib/material/imports/run';
import { objectStorage } from '../../lib/storage';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { mailSink } from '../harness/setup';
import { uploadHeaders } from '../harness/uploads';
import { importRowOf } from './import-flow';
import { caseWithOwner, memberWithAccess, rowBytesOfMbox } from './material-helpers';

/**
 * Issue 17: self-serve imports as jobs, through the real handlers: create (an upload link), PUT
 * the file to the local server's stand-in for a presigned S3 PUT, start, and the in-process worker
 * (the cloud's import worker runs the same runImport).
 */

let server: Server;
let base: string;

beforeAll(async () => {
  server = createLocalServer({ mailSink });
  base = await listen(server, 0);
});

afterEach(() => drainLocalImports());

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

type Setup = Awaited<ReturnType<typeof caseWithOwner>>;
type Kind = 'email' | 'professional-network' | 'chat-platform';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const message = (id: string, subject: string, extra = '') =>
  `From sender@example Mon Nov  2 10:00:00 2026\nMessage-ID: <${id}@lee-law.example>\nDate: Mon, 02 Nov 2026 10:00:00 +0000\nFrom: Ann Lee <ann@lee-law.example>\nTo: Bob Roe <bob@roe.example>\nSubject: ${subject}\n${extra}\n${subject} body.\n\n`;

const withAttachment = (id: string, bytes: number) =>
  `From sender@example Mon Nov  2 10:00:00 2026\nMessage-ID: <${id}@lee-law.example>\nFrom: ann@lee-law.example\nTo: bob@roe.example\nSubject: ${id}\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\nSee attached.\n--b\nContent-Type: application/octet-stream\nContent-Disposition: attachment; filename="${id}.bin"\nContent-Transfer-Encoding: base64\n\n${Buffer.alloc(bytes, 7).toString('base64')}\n--b--\n\n`;

const MBOX = [
  message('root', 'Settlement'),
  message('reply', 'Re: Settlement', 'In-Reply-To: <root@lee-law.example>\nReferences: <root@lee-law.example>\n'),
  message('other', 'Filing'),
].join('');

const CSV = [
  'CONVERSATION ID,CONVERSATION TITLE,FROM,TO,DATE,SUBJECT,CONTENT,FOLDER',
  'c1,Offer,Ann Lee,Bob Roe,2026-11-02 10:00:00 UTC,Offer,We offer terms,INBOX',
  'c1,Offer,Bob Roe,Ann Lee,2026-11-02 11:00:00 UTC,Re: Offer,Counter terms,INBOX',
  'c2,,Carl,Ann Lee,2026-11-03 09:00:00 UTC,,Hello,INBOX',
].join('\n');

const TICKETS = JSON.stringify([
  { id: 101, subject: 'Refund', status: 'closed', created_at: '2026-11-01T10:00:00Z', comments: [] },
  { id: 102, subject: 'Account', status: 'open', created_at: '2026-11-02T10:00:00Z', comments: [] },
  { id: 103, subject: 'Billing', status: 'open', created_at: '2026-11-03T10:00:00Z', comments: [] },
]);

const FILES: Record<Kind, { name: string; contentType: string; text: string }> = {
  email: { name: 'client mailbox.mbox', contentType: 'application/mbox', text: MBOX },
  'professional-network': { name: 'messages.csv', contentType: 'text/csv', text: CSV },
  'chat-platform': { name: 'tickets.json', contentType: 'application/json', text: TICKETS },
};

const asOwner = (s: Setup) => ({ token: s.owner.accessToken, organization: s.organizationId });

function createBody(kind: Kind, text: string, name = FILES[kind].name) {
  return {
    kind,
    fileName: name,
    contentType: FILES[kind].contentType,
    sizeBytes: Buffer.byteLength(text),
    ...(kind === 'email' ? {} : { profile: 'ann.lee' }),
  };
}

/** The link on this test's server (links name PUBLIC_BASE_URL, the configured local server). */
const onServer = (url: string) => {
  const link = new URL(url);
  return `${base}${link.pathname}${link.search}`;
};

async function upload(created: { upload: { url: string; headers: Record<string, string> } }, body: string) {
  const { 'content-length': _length, ...headers } = created.upload.headers;
  const put = await fetch(onServer(created.upload.url), { method: 'PUT', headers: uploadHeaders(headers, body), body });
  expect(put.status, await put.text()).toBe(200);
}

/** Create, upload, start and wait for the worker: the import as GET answers it at the end. */
async function importThrough(s: Setup, kind: Kind, text = FILES[kind].text, name?: string) {
  const created = expectData(
    await invoke(routes.createImport, {
      ...asOwner(s),
      path: { caseId: s.caseId },
      body: createBody(kind, text, name),
    }),
    201,
  );
  await upload(created, text);
  const started = expectData(
    await invoke(routes.startImport, { ...asOwner(s), path: { caseId: s.caseId, importId: created.import.id } }),
    202,
  );
  expect(started.status).toBe('queued');
  await drainLocalImports();
  return expectData(
    await invoke(routes.getImport, { ...asOwner(s), path: { caseId: s.caseId, importId: created.import.id } }),
  );
}

const countOf = async (kind: Kind, caseId: string) => {
  const table = kind === 'email' ? emails : kind === 'professional-network' ? networkMessages : supportTickets;
  return (await db().select({ id: table.id }).from(table).where(eq(table.caseId, caseId))).length;
};

const setStorage = (organizationId: string, storageBytes: number) =>
  db().update(organizationPlans).set({ storageBytes }).where(eq(organizationPlans.organizationId, organizationId));

describe('imports through the API, each kind', () => {
  for (const kind of ['email', 'professional-network', 'chat-platform'] as const) {
    it(`${kind}: uploads, imports in the background, keeps the file as hashed evidence; a re-import adds 0`, async () => {
      // Prepare
      const s = await caseWithOwner();
      const { text } = FILES[kind];
      // Act
      const done = await importThrough(s, kind);
      const again = await importThrough(s, kind);
      // Assess
      expect(done).toMatchObject({
        kind,
        status: 'succeeded',
        sha256: sha256(text),
        sizeBytes: Buffer.byteLength(text),
        createdBy: s.owner.id,
        error: null,
        progress: { itemsRead: 3, itemsImported: 3, itemsSkipped: 0, percent: 100, bytesRead: Buffer.byteLength(text) },
      });
      expect(Date.parse(done.startedAt)).not.toBeNaN();
      expect(Date.parse(done.finishedAt)).not.toBeNaN();
      expect(again).toMatchObject({
        status: 'succeeded',
        progress: { itemsRead: 3, itemsImported: 0, itemsSkipped: 3 },
      });
      expect(await countOf(kind, s.caseId)).toBe(3);
      // The upload is the case's source evidence: hashed in evidence_objects and counted in its storage (twice: two uploads).
      const [row] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, done.id));
      const [object] = await db().select().from(evidenceObjects).where(eq(evidenceObjects.key, row!.objectKey));
      expect(object).toMatchObject({ caseId: s.caseId, sha256: sha256(text), sizeBytes: Buffer.byteLength(text) });
      const [stored] = await db().select({ bytes: cases.storageBytes }).from(cases).where(eq(cases.id, s.caseId));
      expect(stored!.bytes).toBe(2 * Buffer.byteLength(text));
      expect(await db().select().from(storageReservations).where(eq(storageReservations.caseId, s.caseId))).toEqual([]);
    });
  }

  it('the imported email threads are readable through the routes, with the file named as their source', async () => {
    const s = await caseWithOwner();
    await importThrough(s, 'email');
    const threads = expectData(
      await invoke(routes.listEmailThreads, { token: s.owner.accessToken, path: { caseId: s.caseId } }),
    );
    expect(threads.total).toBe(2);
    expect(threads.data.find((t: { subject: string }) => t.subject === 'Settlement')).toMatchObject({
      messageCount: 2,
    });
    const sources = await db().select({ source: emails.importSource }).from(emails).where(eq(emails.caseId, s.caseId));
    expect(sources.map((e) => e.source)).toEqual(['client mailbox.mbox', 'client mailbox.mbox', 'client mailbox.mbox']);
  });

  it('records created, started and finished in the audit trail, and the batches with the import named', async () => {
    const s = await caseWithOwner();
    const done = await importThrough(s, 'chat-platform');
    const events = await db()
      .select({ action: auditEvents.action, metadata: auditEvents.metadata, actorType: auditEvents.actorType })
      .from(auditEvents)
      .where(and(eq(auditEvents.organizationId, s.organizationId), eq(auditEvents.caseId, s.caseId)))
      .orderBy(auditEvents.sequence);
    expect(events.map((e) => e.action)).toEqual([
      'evidence.import.created',
      'evidence.import.started',
      'evidence.support_tickets.imported',
      'evidence.import.finished',
    ]);
    expect(events[2]!.metadata).toMatchObject({ importId: done.id });
    expect(events[3]).toMatchObject({ actorType: 'system', metadata: { status: 'succeeded', itemsImported: 3 } });
    // The uploaded file is an item of the case's chain of custody, beside the tickets it held.
    const custody = expectData(
      await invoke(routes.getCaseCustody, { token: s.owner.accessToken, path: { caseId: s.caseId } }),
    );
    expect(custody.items.data.filter((item: { kind: string }) => item.kind === 'import_file')).toEqual([
      {
        kind: 'import_file',
        id: done.id,
        sha256: sha256(TICKETS),
        sizeBytes: Buffer.byteLength(TICKETS),
        source: 'tickets.json',
        importedAt: done.createdAt,
        importedBy: s.owner.id,
      },
    ]);
  });
});

describe('malformed files', () => {
  const cases_: Array<{ kind: Kind; text: string; itemIndex: number; names: RegExp }> = [
    {
      kind: 'email',
      text: `${message('one', 'One')}${message('two', 'Two')}From sender@example Mon Nov  2 10:00:00 2026\nthis line is not a header\n\nbody\n`,
      itemIndex: 2,
      names: /message 3/i,
    },
    {
      kind: 'professional-network',
      text: `${CSV}\nc3,,Dana,Ann Lee,not a date,,Hi,INBOX\nc3,,Dana,Ann Lee,2026-11-04 09:00:00 UTC,,Later,INBOX`,
      itemIndex: 3,
      names: /line 5/i,
    },
    {
      kind: 'chat-platform',
      text: JSON.stringify([...JSON.parse(TICKETS), { subject: 'no id' }, { id: 105 }]),
      itemIndex: 3,
      names: /ticket 4/i,
    },
  ];
  for (const { kind, text, itemIndex, names } of cases_) {
    it(`${kind}: fails naming the item, keeps what came before it`, async () => {
      const s = await caseWithOwner();
      const failed = await importThrough(s, kind, text);
      expect(failed).toMatchObject({
        status: 'failed',
        error: { code: 'MALFORMED_FILE', itemIndex },
        progress: { itemsImported: itemIndex },
      });
      expect(failed.error.message).toMatch(names);
      expect(await countOf(kind, s.caseId)).toBe(itemIndex);
    });
  }

  it('a syntax error in the ticket JSON fails the import instead of crashing the worker', async () => {
    const s = await caseWithOwner();
    const failed = await importThrough(s, 'chat-platform', '[{"id": 1}, {"id": 2');
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'MALFORMED_FILE' } });
  });
});

describe('starting', () => {
  it('is 409 UPLOAD_INCOMPLETE before the upload and for a file of another size; 409 IMPORT_ALREADY_STARTED twice', async () => {
    const s = await caseWithOwner();
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: createBody('email', MBOX) }),
      201,
    );
    const path = { caseId: s.caseId, importId: created.import.id };
    expect(created.import).toMatchObject({ status: 'awaiting_upload', sha256: null, startedAt: null });
    expect(created.upload).toMatchObject({ method: 'PUT', headers: { 'content-type': 'application/mbox' } });
    expect(created.upload.url).toContain(encodeURIComponent(created.import.id));
    expectError(await invoke(routes.startImport, { ...asOwner(s), path }), 409, 'UPLOAD_INCOMPLETE');
    // The local upload route refuses a body shorter than the link's size (as S3 does): written
    // behind its back, a file of another size is still refused at the start.
    const [row] = await db()
      .select({ key: evidenceImports.objectKey })
      .from(evidenceImports)
      .where(eq(evidenceImports.id, created.import.id));
    await objectStorage().put(row!.key, new TextEncoder().encode(MBOX.slice(0, 40)), 'application/mbox');
    expectError(await invoke(routes.startImport, { ...asOwner(s), path }), 409, 'UPLOAD_INCOMPLETE');
    await upload(created, MBOX);
    expectData(await invoke(routes.startImport, { ...asOwner(s), path }), 202);
    expectError(await invoke(routes.startImport, { ...asOwner(s), path }), 409, 'IMPORT_ALREADY_STARTED');
    await drainLocalImports();
    expectError(await invoke(routes.startImport, { ...asOwner(s), path }), 409, 'IMPORT_ALREADY_STARTED');
    // Retrying what did not fail is refused too.
    expectError(await invoke(routes.retryImport, { ...asOwner(s), path }), 409, 'IMPORT_NOT_FAILED');
  });

  it('two concurrent starts of one import queue it once', async () => {
    const s = await caseWithOwner();
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: createBody('email', MBOX) }),
      201,
    );
    await upload(created, MBOX);
    const path = { caseId: s.caseId, importId: created.import.id };
    const answers = await Promise.all([1, 2, 3].map(() => invoke(routes.startImport, { ...asOwner(s), path })));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409, 409]);
    await drainLocalImports();
    const [stored] = await db().select({ bytes: cases.storageBytes }).from(cases).where(eq(cases.id, s.caseId));
    expect(stored!.bytes).toBe(Buffer.byteLength(MBOX));
  });

  it('a bad body is 400 naming the field; a profile is required for network and chat imports', async () => {
    const s = await caseWithOwner();
    const create = (body: object) => invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body });
    expectError(await create({ ...createBody('email', MBOX), kind: 'pst' }), 400, 'VALIDATION_FAILED', ['body.kind']);
    expectError(await create({ ...createBody('email', MBOX), sizeBytes: 0 }), 400, 'VALIDATION_FAILED', [
      'body.sizeBytes',
    ]);
    const { profile: _profile, ...noProfile } = createBody('chat-platform', TICKETS);
    expectError(await create(noProfile), 400, 'VALIDATION_FAILED', ['body.profile']);
    // A field the API does not know is ignored.
    expectData(await create({ ...createBody('email', MBOX), colour: 'blue' }), 201);
  });
});

describe('storage', () => {
  it('refuses an import whose file does not fit in what is left of the plan (403 STORAGE_LIMIT_REACHED), reserving nothing', async () => {
    const s = await caseWithOwner();
    await setStorage(s.organizationId, 100);
    const refused = await invoke(routes.createImport, {
      ...asOwner(s),
      path: { caseId: s.caseId },
      body: { ...createBody('email', MBOX), sizeBytes: 101 },
    });
    expectError(refused, 403, 'STORAGE_LIMIT_REACHED');
    expect(await db().select().from(evidenceImports).where(eq(evidenceImports.caseId, s.caseId))).toEqual([]);
    expect(await db().select().from(storageReservations).where(eq(storageReservations.caseId, s.caseId))).toEqual([]);
  });

  it('two links together cannot promise more than the plan holds', async () => {
    const s = await caseWithOwner();
    await setStorage(s.organizationId, 1000);
    const create = () =>
      invoke(routes.createImport, {
        ...asOwner(s),
        path: { caseId: s.caseId },
        body: { ...createBody('email', MBOX), sizeBytes: 600 },
      });
    const answers = await Promise.all([create(), create()]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 403]);
  });
});

describe('resuming', () => {
  it('a failure mid-file (attachments over the storage cap) resumes on retry, adding only what was missing', async () => {
    // Prepare: a mailbox of three messages with 1,000-byte attachments; room for the file and two
    // of them, with their rows (issue 29: rows count too).
    const s = await caseWithOwner();
    const text = [withAttachment('a1', 1000), withAttachment('a2', 1000), withAttachment('a3', 1000)].join('');
    const rows = await rowBytesOfMbox(text);
    await setStorage(s.organizationId, Buffer.byteLength(text) + 2500 + (2 * rows) / 3);
    // Act: the first run stops at the third message
    const failed = await importThrough(s, 'email', text);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'STORAGE_LIMIT_REACHED' },
      progress: { itemsRead: 2, itemsImported: 2 },
    });
    expect(await countOf('email', s.caseId)).toBe(2);
    // ... and resumes once the plan has room
    await setStorage(s.organizationId, Buffer.byteLength(text) + 5000 + rows);
    const path = { caseId: s.caseId, importId: failed.id };
    expect(expectData(await invoke(routes.retryImport, { ...asOwner(s), path }), 202)).toMatchObject({
      status: 'queued',
      error: null,
    });
    await drainLocalImports();
    const done = expectData(await invoke(routes.getImport, { ...asOwner(s), path }));
    // Assess
    expect(done).toMatchObject({ status: 'succeeded', progress: { itemsRead: 3, itemsImported: 3, itemsSkipped: 0 } });
    expect(await countOf('email', s.caseId)).toBe(3);
  });

  it('an import paused between batches (the worker out of time) continues from its byte checkpoint', async () => {
    const s = await caseWithOwner();
    const text = [message('p1', 'One'), message('p2', 'Two'), message('p3', 'Three')].join('');
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: createBody('email', text) }),
      201,
    );
    await upload(created, text);
    // Queued directly, so the in-process worker does not take it: this test runs the worker itself.
    await db().update(evidenceImports).set({ status: 'queued' }).where(eq(evidenceImports.id, created.import.id));
    expect(await runImport(created.import.id, { batchSize: 1, shouldPause: () => true })).toBe('paused');
    const [paused] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, created.import.id));
    // Queued again at its checkpoint, keeping its turn: a pause is not a lost worker.
    expect(paused).toMatchObject({
      status: 'queued',
      itemsRead: 1,
      itemsImported: 1,
      bytesRead: message('p1', 'One').length,
    });
    expect(await runImport(created.import.id, { batchSize: 1 })).toBe('finished');
    expect(await runImport(created.import.id)).toBe('skipped');
    const [done] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, created.import.id));
    expect(done).toMatchObject({ status: 'succeeded', itemsRead: 3, itemsImported: 3, itemsSkipped: 0 });
    expect(await countOf('email', s.caseId)).toBe(3);
  });

  it("maintenance sends a crashed worker's import again once its lease lapses; it resumes without duplicates", async () => {
    const s = await caseWithOwner();
    const text = [message('c1', 'One'), message('c2', 'Two')].join('');
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: createBody('email', text) }),
      201,
    );
    await upload(created, text);
    await db().update(evidenceImports).set({ status: 'queued' }).where(eq(evidenceImports.id, created.import.id));
    expect(await runImport(created.import.id, { batchSize: 1, shouldPause: () => true })).toBe('paused');
    // The crash: the worker held the import and never came back.
    await db()
      .update(evidenceImports)
      .set({ status: 'running', leaseUntil: new Date(now().getTime() + 60_000) })
      .where(eq(evidenceImports.id, created.import.id));
    expect(await requeueStalledImports()).toBeGreaterThanOrEqual(0);
    await drainLocalImports();
    const [held] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, created.import.id));
    expect(held).toMatchObject({ status: 'running', itemsRead: 1 });
    testClock.advance(120);
    try {
      expect(await requeueStalledImports()).toBeGreaterThanOrEqual(1);
      await drainLocalImports();
    } finally {
      testClock.reset();
    }
    const [done] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, created.import.id));
    expect(done).toMatchObject({ status: 'succeeded', itemsRead: 2, itemsImported: 2 });
    expect(await countOf('email', s.caseId)).toBe(2);
  });
});

describe('listing and reading', () => {
  it('lists the case imports newest first, paged; another case of the organization does not see them', async () => {
    const s = await caseWithOwner();
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const created = expectData(
        await invoke(routes.createImport, {
          ...asOwner(s),
          path: { caseId: s.caseId },
          body: createBody('email', MBOX),
        }),
        201,
      );
      ids.push(created.import.id);
    }
    const page = expectData(
      await invoke(routes.listImports, {
        ...asOwner(s),
        path: { caseId: s.caseId },
        query: { page: '1', perPage: '2' },
      }),
    );
    expect(page).toMatchObject({ total: 3, page: 1, perPage: 2, totalPages: 2 });
    expect(page.data.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);
    const other = await caseWithOwner();
    expectError(
      await invoke(routes.getImport, { ...asOwner(s), path: { caseId: s.caseId, importId: 'no-such-import' } }),
      404,
      'NOT_FOUND',
    );
    // Another organization's owner naming this case and import.
    const foreign = await invoke(routes.getImport, {
      token: other.owner.accessToken,
      organization: other.organizationId,
      path: { caseId: s.caseId, importId: ids[0]! },
    });
    expect([403, 404]).toContain(foreign.status);
  });

  it('a viewer of the case is refused (403); an admin of the case may import', async () => {
    const s = await caseWithOwner();
    const viewer = await memberWithAccess(s.organizationId, s.caseId, 'viewer');
    const admin = await memberWithAccess(s.organizationId, s.caseId, 'admin');
    const body = createBody('email', MBOX);
    expectError(
      await invoke(routes.createImport, {
        token: viewer.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
        body,
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectError(
      await invoke(routes.listImports, {
        token: viewer.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
      }),
      403,
      'INSUFFICIENT_ROLE',
    );
    expectData(
      await invoke(routes.createImport, {
        token: admin.accessToken,
        organization: s.organizationId,
        path: { caseId: s.caseId },
        body,
      }),
      201,
    );
  });
});

/** An import of the actor's case in `status`, its file stored: what start and retry act on. */
async function storedImport(caseId: string, organizationId: string, status: 'awaiting_upload' | 'failed') {
  const row = await importRowOf(caseId, organizationId, {
    sizeBytes: Buffer.byteLength(MBOX),
    status,
    ...(status === 'failed' ? { errorCode: 'INTERNAL', errorMessage: 'stopped', startedAt: now() } : {}),
  });
  await objectStorage().put(row.objectKey, Buffer.from(MBOX), 'application/mbox');
  return row;
}

describeSecurity(routes.createImport, {
  request: ({ caseId }) => ({ path: { caseId }, body: createBody('email', MBOX) }),
  succeeds: true,
});
describeSecurity(routes.startImport, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, importId: (await storedImport(caseId, organizationId, 'awaiting_upload')).id },
  }),
  succeeds: true,
});
describeSecurity(routes.retryImport, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, importId: (await storedImport(caseId, organizationId, 'failed')).id },
  }),
  succeeds: true,
});
describeSecurity(routes.getImport, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, importId: (await storedImport(caseId, organizationId, 'awaiting_upload')).id },
  }),
  succeeds: true,
});
describeSecurity(routes.listImports, {
  request: ({ caseId }) => ({ path: { caseId } }),
  succeeds: true,
});

it('another organization cannot start, retry or read an import by naming its own case', async () => {
  const victim = await caseWithOwner();
  const attacker = await createUser();
  const attackerCase = await caseWithOwner();
  const row = await storedImport(victim.caseId, victim.organizationId, 'awaiting_upload');
  for (const route of [routes.startImport, routes.retryImport, routes.getImport]) {
    // The attacker's own case in the path, the victim's import id: not found in that case.
    expectError(
      await invoke(route, {
        token: attackerCase.owner.accessToken,
        organization: attackerCase.organizationId,
        path: { caseId: attackerCase.caseId, importId: row.id },
      }),
      404,
      'NOT_FOUND',
    );
  }
  const foreign = await invoke(routes.startImport, {
    token: attacker.accessToken,
    organization: attacker.organizationId,
    path: { caseId: victim.caseId, importId: row.id },
  });
  expect([403, 404]).toContain(foreign.status);
  const [unchanged] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, row.id));
  expect(unchanged!.status).toBe('awaiting_upload');
});
