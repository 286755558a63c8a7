import { and, asc, eq, isNull, lt, or } from 'drizzle-orm';
import { addSeconds, now } from '../../clock';
import { config } from '../../config';
import { db } from '../../db/client';
import { evidenceImports } from '../../db/schema';
import { logger } from '../../log';
import { traced } from '../../observability/tracing';
import type { ImportRunOutcome } from './run';

/** What the in-process worker runs for one import: runImport (lib/material/imports/run.ts). */
export type LocalImportRunner = (importId: string) => Promise<ImportRunOutcome>;

let localRunner: LocalImportRunner | undefined;
/** The local worker's chain: one import at a time, in the order they were queued. */
let localQueue: Promise<void> | undefined;
let sqs: import('@aws-sdk/client-sqs').SQSClient | undefined;

/**
 * Makes this process its own import worker (the local server, the admin command, the tests).
 * Registered, not imported here: the importers are the worker's weight, never a route's bundle.
 */
export function useLocalImportRunner(runner: LocalImportRunner | undefined): void {
  localRunner = runner;
}

/**
 * Hands an import to the worker: an SQS message `{ importId }` in the cloud (the import worker
 * function takes it), else this process's worker (useLocalImportRunner), one import at a time; with
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
  const runner = localRunner;
  if (!runner) throw new Error('No import queue (IMPORT_QUEUE_URL) and no local import worker in this process');
  localQueue = (localQueue ?? Promise.resolve()).then(async () => {
    try {
      // Without a time budget a local run never pauses; 'paused' would only go round again.
      while ((await runner(importId)) === 'paused');
    } catch (error) {
      logger.error('local import worker failed', { error, importId });
    }
  });
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
  let seen: Promise<void> | undefined;
  do {
    seen = localQueue;
    await seen;
  } while (seen !== localQueue);
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
