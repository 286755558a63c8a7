import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { addSeconds, now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { emails, evidenceImports } from '../../lib/db/schema';
import { drainLocalImports, requeueStalledImports } from '../../lib/material/imports';
import { MAX_IMPORT_ATTEMPTS } from '../../lib/material/imports/jobs';
import { runImport } from '../../lib/material/imports/run';
import { expectData, expectError, invoke } from '../harness/invoke';
import { asOwner, importServer, mboxMessage, type Setup, withoutWorker } from './import-flow';
import { caseWithOwner } from '../harness/cases';

/**
 * Issue 29, item 3: no poison pills. An import whose worker keeps dying (or keeps hitting an
 * unexpected error) has a bounded number of attempts, then fails for good with its own code; a
 * pause at a checkpoint is not an attempt.
 */

const flow = importServer();

/** More messages than attempts, so a worker pausing after each message never reaches the end. */
const MESSAGES = MAX_IMPORT_ATTEMPTS + 3;
const TEXT = Array.from({ length: MESSAGES }, (_, i) => mboxMessage(`m${i}`, `Message ${i}`)).join('');

const rowOf = async (importId: string) =>
  (await db().select().from(evidenceImports).where(eq(evidenceImports.id, importId)))[0]!;

/** An uploaded import, started with no worker in this process. */
async function startedWithoutWorker(s: Setup) {
  const created = await flow.createUploaded(s, TEXT);
  await flow.startQueued(s, created.import.id);
  return created.import.id as string;
}

/** What a worker that dies mid-import leaves: the import running, its lease lapsed. */
const workerDied = (importId: string) =>
  db()
    .update(evidenceImports)
    .set({ status: 'running', leaseUntil: addSeconds(now(), -1) })
    .where(eq(evidenceImports.id, importId));

describe('bounded attempts', () => {
  it('a worker lost while holding the import spends an attempt; pausing at a checkpoint does not', async () => {
    const s = await caseWithOwner();
    const importId = await startedWithoutWorker(s);

    expect(await runImport(importId, { batchSize: 1, shouldPause: () => true })).toBe('paused');
    expect(await rowOf(importId)).toMatchObject({ status: 'queued', attempts: 0, itemsRead: 1 });
    expect(await runImport(importId, { batchSize: 1, shouldPause: () => true })).toBe('paused');
    expect(await rowOf(importId)).toMatchObject({ attempts: 0, itemsRead: 2 });
    await workerDied(importId);
    expect(await runImport(importId)).toBe('finished');

    expect(await rowOf(importId)).toMatchObject({ status: 'succeeded', attempts: 1, itemsImported: MESSAGES });
  });

  it(`after ${MAX_IMPORT_ATTEMPTS} lost workers the import fails ATTEMPTS_EXHAUSTED, is never sent again, and cannot be retried`, async () => {
    const s = await caseWithOwner();
    const importId = await startedWithoutWorker(s);
    expect(await runImport(importId, { batchSize: 1, shouldPause: () => true })).toBe('paused');

    // Maintenance sends it again each time its lease lapses; each worker dies holding it.
    for (let lost = 1; lost < MAX_IMPORT_ATTEMPTS; lost += 1) {
      await workerDied(importId);
      expect(await runImport(importId, { batchSize: 1, shouldPause: () => true })).toBe('paused');
      expect(await rowOf(importId)).toMatchObject({ attempts: lost });
    }
    await workerDied(importId);
    expect(await requeueStalledImports()).toBe(1);
    await drainLocalImports();

    const failed = await flow.read(s, importId);
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'ATTEMPTS_EXHAUSTED' },
      progress: { itemsImported: MAX_IMPORT_ATTEMPTS },
    });
    expect(failed.error.message).toMatch(new RegExp(`stopped ${MAX_IMPORT_ATTEMPTS} times`));
    // What it imported stays; nothing sends it again, and a retry is refused.
    expect(await db().select().from(emails).where(eq(emails.caseId, s.caseId))).toHaveLength(MAX_IMPORT_ATTEMPTS);
    expectError(
      await invoke(routes.retryImport, { ...asOwner(s), path: flow.pathOf(s, importId) }),
      409,
      'IMPORT_NOT_RETRYABLE',
    );
    testClock.advance(3600);
    expect(await requeueStalledImports()).toBe(0);
  });

  it('unexpected errors spend attempts too: the last one fails ATTEMPTS_EXHAUSTED instead of INTERNAL', async () => {
    const s = await caseWithOwner();
    const importId = await startedWithoutWorker(s);
    const crash = () => {
      throw new Error('worker bug');
    };
    const codes: string[] = [];
    for (let attempt = 1; attempt <= MAX_IMPORT_ATTEMPTS; attempt += 1) {
      await expect(runImport(importId, { batchSize: 1, shouldPause: crash })).rejects.toThrow('worker bug');
      const row = await rowOf(importId);
      codes.push(row.errorCode!);
      expect(row.attempts).toBe(attempt);
      if (attempt < MAX_IMPORT_ATTEMPTS)
        await withoutWorker(async () =>
          expectData(await invoke(routes.retryImport, { ...asOwner(s), path: flow.pathOf(s, importId) }), 202),
        );
    }

    expect(codes).toEqual([...Array(MAX_IMPORT_ATTEMPTS - 1).fill('INTERNAL'), 'ATTEMPTS_EXHAUSTED']);
    expectError(
      await invoke(routes.retryImport, { ...asOwner(s), path: flow.pathOf(s, importId) }),
      409,
      'IMPORT_NOT_RETRYABLE',
    );
  });
});
