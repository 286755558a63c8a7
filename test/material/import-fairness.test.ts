import { eq, inArray } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { addSeconds, now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { evidenceImports } from '../../lib/db/schema';
import { logger } from '../../lib/log';
import { runMaintenance } from '../../lib/maintenance';
import { drainLocalImports } from '../../lib/material/imports';
import { useLocalImportRunner } from '../../lib/material/imports/queue';
import { IMPORT_WAIT_ALERT_DAYS } from '../../lib/material/imports/staging-watch';
import { runImport } from '../../lib/material/imports/run';
import { importServer, mboxMessage, type Setup } from './import-flow';
import { caseWithOwner } from '../harness/cases';

/**
 * Issue 29, item 4: one tenant does not stall the others. An organization runs one import at a
 * time, in the order it queued them; another organization's import is claimed meanwhile.
 */

const flow = importServer();

const text = (tag: string, count = 3) =>
  Array.from({ length: count }, (_, i) => mboxMessage(`${tag}-${i}`, `${tag} ${i}`)).join('');

/** Uploaded and started with no worker in this process: queued, for the test to run the worker. */
async function queued(s: Setup, body: string): Promise<string> {
  const created = await flow.createUploaded(s, body);
  // No worker in this process: the test runs it.
  await flow.startQueued(s, created.import.id);
  return created.import.id;
}

const statusOf = async (importId: string) =>
  (
    await db().select({ status: evidenceImports.status }).from(evidenceImports).where(eq(evidenceImports.id, importId))
  )[0]!.status;

describe('fair sharing of the import worker', () => {
  it("an organization's imports wait their turn in order; another organization's import runs meanwhile", async () => {
    const x = await caseWithOwner();
    const y = await caseWithOwner();
    const x1 = await queued(x, text('x1'));
    const x2 = await queued(x, text('x2'));
    const y1 = await queued(y, text('y1'));

    // x2 was queued after x1: it waits, even with no worker on x1 yet.
    expect(await runImport(x2)).toBe('skipped');
    // A worker holds x1 (its lease is live): x2 still waits, y1 does not.
    await db()
      .update(evidenceImports)
      .set({ status: 'running', leaseUntil: addSeconds(now(), 600) })
      .where(eq(evidenceImports.id, x1));
    expect(await runImport(x2)).toBe('skipped');
    expect(await runImport(y1)).toBe('finished');
    // x1's worker ends it: x2 is sent to the worker then, without maintenance.
    await db().update(evidenceImports).set({ status: 'queued', leaseUntil: null }).where(eq(evidenceImports.id, x1));
    expect(await runImport(x1)).toBe('finished');
    await drainLocalImports();

    expect([await statusOf(x1), await statusOf(x2), await statusOf(y1)]).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
  });

  it('two workers claiming two imports of one organization at once: one runs, the other waits and follows', async () => {
    const x = await caseWithOwner();
    const first = await queued(x, text('a', 20));
    const second = await queued(x, text('b', 20));
    // Neither ahead of the other in the queue: only the one-running-import rule decides.
    await db()
      .update(evidenceImports)
      .set({ queuedAt: null })
      .where(inArray(evidenceImports.id, [first, second]));

    const outcomes = await Promise.all([first, second].map((id) => runImport(id, { batchSize: 1 })));
    await drainLocalImports();

    expect(outcomes.sort()).toEqual(['finished', 'skipped']);
    expect([await statusOf(first), await statusOf(second)]).toEqual(['succeeded', 'succeeded']);
  });

  it('a queued import waiting long keeps its upload; maintenance reports it before the staging expiry', async () => {
    const x = await caseWithOwner();
    const waiting = await queued(x, text('w'));
    const errors = vi.spyOn(logger, 'error');
    // A worker that never gets to it: the import keeps waiting (as behind its organization's long
    // imports) when maintenance sends it again.
    const maintenance = async () => {
      useLocalImportRunner(async () => 'skipped');
      try {
        return await runMaintenance();
      } finally {
        useLocalImportRunner((importId) => runImport(importId));
      }
    };
    try {
      // Past the former 2-day staging expiry, nothing to report yet.
      testClock.advance(3 * 86_400);
      expect((await maintenance()).importsNearStagingExpiry).toBe(0);
      testClock.advance((IMPORT_WAIT_ALERT_DAYS - 3) * 86_400 - 3_600);
      expect((await maintenance()).importsNearStagingExpiry).toBe(0);
      expect(errors).not.toHaveBeenCalled();

      testClock.advance(7_200);
      expect((await maintenance()).importsNearStagingExpiry).toBe(1);
      expect(errors).toHaveBeenCalledWith(
        expect.stringContaining('staging'),
        expect.objectContaining({ imports: [expect.objectContaining({ importId: waiting })] }),
      );
    } finally {
      errors.mockRestore();
    }
    // Its turn comes: the upload is still there to become evidence.
    expect(await runImport(waiting)).toBe('finished');
    expect(await statusOf(waiting)).toBe('succeeded');
    expect((await maintenance()).importsNearStagingExpiry).toBe(0);
  });
});
