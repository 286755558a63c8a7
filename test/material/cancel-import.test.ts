import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { auditEvents, cases, emails, evidenceImports, storageReservations } from '../../lib/db/schema';
import { drainLocalImports } from '../../lib/material/imports';
import { runImport } from '../../lib/material/imports/run';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { asOwner, importServer, mboxImportBody, mboxMessage, type Setup, importRowOf } from './import-flow';
import { caseWithOwner } from '../harness/cases';

/**
 * POST /cases/{caseId}/imports/{importId}/cancel (issue 29, item 3): ends an import that has not
 * ended. What it imported stays, it never runs again, an upload's reservation is released and
 * its link sealed, and the event is in the audit trail; a succeeded or cancelled import is 409.
 */

const flow = importServer();

const TEXT = [mboxMessage('c1', 'One'), mboxMessage('c2', 'Two'), mboxMessage('c3', 'Three')].join('');
const SIZE = Buffer.byteLength(TEXT);

const cancel = (s: Setup, importId: string) =>
  invoke(routes.cancelImport, { ...asOwner(s), path: flow.pathOf(s, importId) });

const rowOf = async (importId: string) =>
  (await db().select().from(evidenceImports).where(eq(evidenceImports.id, importId)))[0]!;

const storageOf = async (caseId: string) =>
  (await db().select({ bytes: cases.storageBytes }).from(cases).where(eq(cases.id, caseId)))[0]!.bytes;

const emailCount = async (caseId: string) =>
  (await db().select({ id: emails.id }).from(emails).where(eq(emails.caseId, caseId))).length;

describe('cancelling an import', () => {
  it('awaiting its upload: cancelled, the reservation released, the link refuses the file', async () => {
    const s = await caseWithOwner();
    const created = expectData(
      await invoke(routes.createImport, { ...asOwner(s), path: { caseId: s.caseId }, body: mboxImportBody(TEXT) }),
      201,
    );

    const cancelled = expectData(await cancel(s, created.import.id));

    expect(cancelled).toMatchObject({ id: created.import.id, status: 'cancelled' });
    expect(Date.parse(cancelled.finishedAt)).not.toBeNaN();
    expect(await db().select().from(storageReservations).where(eq(storageReservations.caseId, s.caseId))).toEqual([]);
    expect((await flow.put(created.upload, TEXT)).status).toBe(409);
    expectError(
      await invoke(routes.startImport, { ...asOwner(s), path: flow.pathOf(s, created.import.id) }),
      409,
      'IMPORT_ALREADY_STARTED',
    );
  });

  it('queued and never copied into evidence: the file stops counting and no worker runs it', async () => {
    const s = await caseWithOwner();
    const created = await flow.createUploaded(s, TEXT);
    await flow.startQueued(s, created.import.id);
    expect(await storageOf(s.caseId)).toBe(SIZE);

    expect(expectData(await cancel(s, created.import.id))).toMatchObject({ status: 'cancelled' });

    expect(await storageOf(s.caseId)).toBe(0);
    expect(await runImport(created.import.id)).toBe('skipped');
    expect(await emailCount(s.caseId)).toBe(0);
  });

  it('running: the worker stops before its next batch commits; what it imported and its file stay', async () => {
    const s = await caseWithOwner();
    // Many one-message batches: the cancel sent after the first lands long before the last.
    const long = Array.from({ length: 100 }, (_, i) => mboxMessage(`r${i}`, `Message ${i}`)).join('');
    const created = await flow.createUploaded(s, long);
    await flow.startQueued(s, created.import.id);
    let batches = 0;

    const outcome = await runImport(created.import.id, {
      batchSize: 1,
      // Cancelled by its user while the worker is between its first and second batch.
      shouldPause: () => {
        batches += 1;
        if (batches === 1) void cancel(s, created.import.id);
        return false;
      },
    });
    await drainLocalImports();

    expect(outcome).toBe('cancelled');
    const row = await rowOf(created.import.id);
    expect(row).toMatchObject({ status: 'cancelled' });
    expect(row.itemsImported).toBeGreaterThanOrEqual(1);
    expect(row.itemsImported).toBeLessThan(100);
    expect(await emailCount(s.caseId)).toBe(row.itemsImported);
    expect(row.sha256).not.toBeNull();
    expect(await storageOf(s.caseId)).toBe(Buffer.byteLength(long));
    const events = await db()
      .select({ action: auditEvents.action, metadata: auditEvents.metadata })
      .from(auditEvents)
      .where(and(eq(auditEvents.organizationId, s.organizationId), eq(auditEvents.caseId, s.caseId)));
    const actions = events.map((event) => event.action);
    expect(actions).toContain('evidence.import.cancelled');
    expect(actions).not.toContain('evidence.import.finished');
    expect(events.find((event) => event.action === 'evidence.import.cancelled')!.metadata).toMatchObject({
      from: 'running',
      fileKept: true,
    });
  });

  it('failed: cancelled, and a retry is then refused', async () => {
    const s = await caseWithOwner();
    const created = await flow.createUploaded(s, `${TEXT}From x Mon Nov  2 10:00:00 2026\nnot a header\n\nbody\n`);
    expect(await flow.startAndWait(s, created.import.id)).toMatchObject({ status: 'failed' });

    expect(expectData(await cancel(s, created.import.id))).toMatchObject({ status: 'cancelled' });

    expectError(
      await invoke(routes.retryImport, { ...asOwner(s), path: flow.pathOf(s, created.import.id) }),
      409,
      'IMPORT_NOT_FAILED',
    );
    expect(await emailCount(s.caseId)).toBe(3);
  });

  it('succeeded or already cancelled: 409 IMPORT_NOT_CANCELLABLE', async () => {
    const s = await caseWithOwner();
    const created = await flow.createUploaded(s, TEXT);
    expect(await flow.startAndWait(s, created.import.id)).toMatchObject({ status: 'succeeded' });
    expectError(await cancel(s, created.import.id), 409, 'IMPORT_NOT_CANCELLABLE');

    const other = await flow.createUploaded(s, TEXT);
    expectData(await cancel(s, other.import.id));
    expectError(await cancel(s, other.import.id), 409, 'IMPORT_NOT_CANCELLABLE');
    expectError(await cancel(s, 'no-such-import'), 404, 'NOT_FOUND');
  });

  it('another organization cannot cancel an import by naming its own case or the victim case', async () => {
    const victim = await caseWithOwner();
    const created = await flow.createUploaded(victim, TEXT);
    const attackerCase = await caseWithOwner();
    const attacker = await createUser();

    expectError(await cancel(attackerCase, created.import.id), 404, 'NOT_FOUND');
    const foreign = await invoke(routes.cancelImport, {
      token: attacker.accessToken,
      organization: attacker.organizationId,
      path: { caseId: victim.caseId, importId: created.import.id },
    });
    expect([403, 404]).toContain(foreign.status);
    expect((await rowOf(created.import.id)).status).toBe('awaiting_upload');
  });
});

describeSecurity(routes.cancelImport, {
  request: async ({ caseId, organizationId }) => ({
    path: { caseId, importId: (await importRowOf(caseId, organizationId, { sizeBytes: SIZE })).id },
  }),
  succeeds: true,
});
