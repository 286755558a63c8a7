import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import {
  auditEvents,
  cases,
  emails,
  evidenceImports,
  evidenceObjects,
  networkMessages,
  storageReservations,
  supportTickets,
} from '../../lib/db/schema';
import { drainLocalImports, requeueStalledImports } from '../../lib/material/imports';
import { runImport } from '../../lib/material/imports/run';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import {
  asOwner,
  CSV,
  IMPORT_FILES,
  type ImportKind,
  importBody,
  importServer,
  type Setup,
  sha256,
  storedImport,
  TICKETS,
  mboxMessage,
} from './import-flow';
import { caseWithOwner } from '../harness/cases';
import { rowBytesOfMbox } from '../harness/material';
import { setPlanStorage } from '../harness/plans';

/**
 * Issue 17: self-serve imports as jobs, through the real handlers: create (an upload link), PUT
 * the file to the local server's stand-in for a presigned S3 PUT, start, and the in-process worker
 * (the cloud's import worker runs the same runImport).
 */

const flow = importServer();
const { upload } = flow;

const withAttachment = (id: string, bytes: number) =>
  `From sender@example Mon Nov  2 10:00:00 2026\nMessage-ID: <${id}@lee-law.example>\nFrom: ann@lee-law.example\nTo: bob@roe.example\nSubject: ${id}\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b"\n\n--b\nContent-Type: text/plain\n\nSee attached.\n--b\nContent-Type: application/octet-stream\nContent-Disposition: attachment; filename="${id}.bin"\nContent-Transfer-Encoding: base64\n\n${Buffer.alloc(bytes, 7).toString('base64')}\n--b--\n\n`;

/** Create, upload, start and wait for the worker: the import as GET answers it at the end. */
async function importThrough(s: Setup, kind: ImportKind, text = IMPORT_FILES[kind].text, name?: string) {
  const created = expectData(
    await invoke(routes.createImport, {
      ...asOwner(s),
      path: { caseId: s.caseId },
      body: importBody(kind, text, name),
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

const countOf = async (kind: ImportKind, caseId: string) => {
  const table = kind === 'email' ? emails : kind === 'professional-network' ? networkMessages : supportTickets;
  return (await db().select({ id: table.id }).from(table).where(eq(table.caseId, caseId))).length;
};

describe('imports through the API, each kind', () => {
  for (const kind of ['email', 'professional-network', 'chat-platform'] as const) {
    it(`${kind}: uploads, imports in the background, keeps the file as hashed evidence; a re-import adds 0`, async () => {
      // Prepare
      const s = await caseWithOwner();
      const { text } = IMPORT_FILES[kind];
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
  const cases_: Array<{ kind: ImportKind; text: string; itemIndex: number; names: RegExp }> = [
    {
      kind: 'email',
      text: `${mboxMessage('one', 'One')}${mboxMessage('two', 'Two')}From sender@example Mon Nov  2 10:00:00 2026\nthis line is not a header\n\nbody\n`,
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

describe('resuming', () => {
  it('a failure mid-file (attachments over the storage cap) resumes on retry, adding only what was missing', async () => {
    // Prepare: a mailbox of three messages with 1,000-byte attachments; room for the file and two
    // of them, with their rows (issue 29: rows count too).
    const s = await caseWithOwner();
    const text = [withAttachment('a1', 1000), withAttachment('a2', 1000), withAttachment('a3', 1000)].join('');
    const rows = await rowBytesOfMbox(text);
    await setPlanStorage(s.organizationId, Buffer.byteLength(text) + 2500 + (2 * rows) / 3);
    // Act: the first run stops at the third message
    const failed = await importThrough(s, 'email', text);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'STORAGE_LIMIT_REACHED' },
      progress: { itemsRead: 2, itemsImported: 2 },
    });
    expect(await countOf('email', s.caseId)).toBe(2);
    // ... and resumes once the plan has room
    await setPlanStorage(s.organizationId, Buffer.byteLength(text) + 5000 + rows);
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
    const text = [mboxMessage('p1', 'One'), mboxMessage('p2', 'Two'), mboxMessage('p3', 'Three')].join('');
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: importBody('email', text) }),
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
      bytesRead: mboxMessage('p1', 'One').length,
    });
    expect(await runImport(created.import.id, { batchSize: 1 })).toBe('finished');
    expect(await runImport(created.import.id)).toBe('skipped');
    const [done] = await db().select().from(evidenceImports).where(eq(evidenceImports.id, created.import.id));
    expect(done).toMatchObject({ status: 'succeeded', itemsRead: 3, itemsImported: 3, itemsSkipped: 0 });
    expect(await countOf('email', s.caseId)).toBe(3);
  });

  it("maintenance sends a crashed worker's import again once its lease lapses; it resumes without duplicates", async () => {
    const s = await caseWithOwner();
    const text = [mboxMessage('c1', 'One'), mboxMessage('c2', 'Two')].join('');
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: importBody('email', text) }),
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
