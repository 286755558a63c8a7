import { and, asc, eq, isNull, lt, or } from 'drizzle-orm';
import { addSeconds, now } from '../../clock';
import { config } from '../../config';
import { db } from '../../db/client';
import { evidenceImports } from '../../db/schema/material';
import { logger } from '../../log';
import { traced } from '../../observability/tracing';
import type { ImportRunOutcome } from './run';

/**
 * What the local worker runs for one import: runImport (lib/material/imports/run.ts), in this
 * process or in a worker thread (infra/local/import-threads.ts).
 */
export type LocalImportRunner = (importId: string) => Promise<ImportRunOutcome>;

let localRunner: LocalImportRunner | undefined;
/** How many imports the local worker runs at once (its slots). */
let localSlots = 1;
/** Imports handed to the local worker and not yet taken by a slot, in the order they came. */
const localPending: string[] = [];
/**
 * Imports the claim skipped while another import ran here: most likely their organization's
 * running import (one at a time per organization, the claim's rule). Tried again, in order, when
 * a slot frees up.
 */
const localWaiting: string[] = [];
let localRunning = 0;
/** Settled when the local worker has nothing pending or running (drainLocalImports). */
let localIdle: { promise: Promise<void>; resolve: () => void } | undefined;

let sqs: import('@aws-sdk/client-sqs').SQSClient | undefined;

/**
 * Makes this process its own import worker (the local server, the admin command, the tests), with
 * `slots` imports at once (1: one at a time, in the order they were queued). Registered, not
 * imported here: the importers are the worker's weight, never a route's bundle.
 */
export function useLocalImportRunner(runner: LocalImportRunner | undefined, slots = 1): void {
  localRunner = runner;
  localSlots = Math.max(1, Math.floor(slots));
}

/**
 * Hands an import to the worker: an SQS message `{ importId }` in the cloud (the import worker
 * function takes it), else this process's worker (useLocalImportRunner) as a slot frees up; with
 * neither it throws (a function deployed without the queue's URL is an error, not a silent run). Called
 * after the import's `queued` state has committed, so the worker always finds it; a failure to
 * send leaves it queued, and maintenance sends it again (requeueStalledImports).
 */
export async function enqueueImport(importId: string): Promise<void> {
  const queueUrl = config().IMPORT_QUEUE_URL;
  if (queueUrl) {
    const { SQSClient, SendMessageCommand } = await import('@aws-sdk/client-sqs');
    sqs ??= traced(new SQSClient({}));
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ importId }) }));
    return;
  }
  if (!localRunner) throw new Error('No import queue (IMPORT_QUEUE_URL) and no local import worker in this process');
  if (!localPending.includes(importId)) localPending.push(importId);
  fillLocalSlots();
}

/** Starts pending imports while a slot is free. */
function fillLocalSlots(): void {
  const runner = localRunner;
  while (runner && localRunning < localSlots && localPending.length > 0) {
    const importId = localPending.shift()!;
    localRunning += 1;
    void runLocally(runner, importId);
  }
  if (localRunning === 0 && localPending.length === 0) {
    localIdle?.resolve();
    localIdle = undefined;
  }
}

/**
 * One slot's run of one import. 'skipped' while another import runs here is kept waiting (the
 * claim holds it back behind its organization's running import) and tried again once a slot frees
 * up; skipped with nothing else running, nothing here will free it (it finished, or another
 * process runs it), and it is dropped: maintenance sends a queued import again anyway.
 */
async function runLocally(runner: LocalImportRunner, importId: string): Promise<void> {
  let outcome: ImportRunOutcome | 'threw' = 'threw';
  try {
    // Without a time budget a local run never pauses; 'paused' would only go round again.
    do outcome = await runner(importId);
    while (outcome === 'paused');
  } catch (error) {
    logger.error('local import worker failed', { error, importId });
  } finally {
    localRunning -= 1;
    if (outcome === 'skipped') {
      if (localRunning > 0 && !localWaiting.includes(importId)) localWaiting.push(importId);
    } else {
      // A slot (and perhaps an organization) freed up: the waiting go before anything newer.
      for (const waiting of localWaiting.splice(0).reverse())
        if (!localPending.includes(waiting)) localPending.unshift(waiting);
    }
    fillLocalSlots();
  }
}

/**
 * Sends the organization's next queued import (the oldest in the queue) to the worker: called when
 * one of its imports ends, since imports that waited for their organization's turn were skipped
 * by the worker when their message came.
 */
export async function enqueueNextImport(organizationId: string): Promise<void> {
  const [next] = await db()
    .select({ id: evidenceImports.id })
    .from(evidenceImports)
    .where(and(eq(evidenceImports.organizationId, organizationId), eq(evidenceImports.status, 'queued')))
    .orderBy(asc(evidenceImports.queuedAt), asc(evidenceImports.id))
    .limit(1);
  if (next) await enqueueImport(next.id);
}

/** Resolves once the local worker has run every import queued so far (the tests, the admin command). */
export async function drainLocalImports(): Promise<void> {
  while (localRunning > 0 || localPending.length > 0) {
    if (!localIdle) {
      let resolve!: () => void;
      const promise = new Promise<void>((settle) => {
        resolve = settle;
      });
      localIdle = { promise, resolve };
    }
    await localIdle.promise;
  }
}

/** A queued import no worker took within this long, or a running one whose lease lapsed, is sent again. */
const STALLED_AFTER_SECONDS = 15 * 60;

/**
 * Maintenance: sends again every import left queued past STALLED_AFTER_SECONDS (the message after
 * its start could not be sent) and every running import whose worker's lease lapsed (the worker
 * crashed or timed out, and the queue gave up on the message). The worker resumes each from its
 * last checkpoint; one already taken up again is skipped by the claim. Returns how many were sent.
 */
export async function requeueStalledImports(): Promise<number> {
  const at = now();
  const stalled = await db()
    .select({ id: evidenceImports.id })
    .from(evidenceImports)
    .where(
      or(
        and(
          eq(evidenceImports.status, 'queued'),
          lt(evidenceImports.updatedAt, addSeconds(at, -STALLED_AFTER_SECONDS)),
        ),
        and(
          eq(evidenceImports.status, 'running'),
          or(isNull(evidenceImports.leaseUntil), lt(evidenceImports.leaseUntil, at)),
        ),
      ),
    )
    .limit(100);
  for (const { id } of stalled) await enqueueImport(id);
  return stalled.length;
}
