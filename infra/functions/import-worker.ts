import type { Context, SQSBatchItemFailure, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import { connectDb } from '../../lib/db/client';
import { logger } from '../../lib/log';
import { enqueueCustodyExport, runCustodyExport } from '../../lib/material/custody-exports';
import { enqueueImport } from '../../lib/material/imports/queue';
import { runImport } from '../../lib/material/imports/run';
import { observed } from '../../lib/observability';
import { enqueueTaggingJob, runTaggingJob } from '../../lib/review';

/**
 * An import stops at its next checkpoint once less than this is left of the invocation (15 minutes
 * in all): room for the batch or copy segment in flight (1 GiB, hashed in 10-15 s) to commit
 * before Lambda ends the function.
 */
export const PAUSE_WITH_MS_LEFT = 120_000;

/** What lib/material/imports/queue.ts sends: `{ "importId": "..." }`. */
const ImportMessage = z.object({ importId: z.string().check(z.minLength(1), z.maxLength(200)) });
/** What lib/material/custody-exports.ts sends: `{ "custodyExportId": "..." }`. */
const CustodyExportMessage = z.object({ custodyExportId: z.string().check(z.minLength(1), z.maxLength(200)) });

/** What lib/review/tagging/tagging-jobs.ts sends: `{ "taggingJobId": "..." }`. */
const TaggingJobMessage = z.object({ taggingJobId: z.string().check(z.minLength(1), z.maxLength(200)) });

function parsed(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}

function importIdOf(body: string): string | null {
  const message = ImportMessage.safeParse(parsed(body));
  return message.success ? message.data.importId : null;
}

function custodyExportIdOf(body: string): string | null {
  const message = CustodyExportMessage.safeParse(parsed(body));
  return message.success ? message.data.custodyExportId : null;
}

function taggingJobIdOf(body: string): string | null {
  const message = TaggingJobMessage.safeParse(parsed(body));
  return message.success ? message.data.taggingJobId : null;
}

/**
 * The import worker (not an API route): takes the import queue's messages (the stack delivers
 * one per invocation) and runs each import from its last checkpoint with runImport, the code the
 * local server runs in-process. An import that needs longer than one invocation pauses at a
 * checkpoint and is sent to the queue again, so the next invocation continues it. A message whose
 * run threw is reported as a batch item failure: only it comes back (after the queue's visibility
 * timeout, by when the import's lease has lapsed), and after three receives it goes to the
 * dead-letter queue, which alarms. A message that names no import is dropped with a log line.
 */
async function runMessages(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  logger.appendKeys({ requestId: context.awsRequestId });
  try {
    await connectDb();
    const batchItemFailures: SQSBatchItemFailure[] = [];
    for (const record of event.Records) {
      const custodyExportId = custodyExportIdOf(record.body);
      if (custodyExportId) {
        try {
          // One volume (about 200 MB, seconds) at a time; it pauses between volumes when time runs short.
          const outcome = await runCustodyExport(custodyExportId, {
            shouldPause: () => context.getRemainingTimeInMillis() < PAUSE_WITH_MS_LEFT,
          });
          if (outcome === 'paused') await enqueueCustodyExport(custodyExportId);
          logger.info('custody export run', { custodyExportId, outcome, messageId: record.messageId });
        } catch (error) {
          logger.error('custody export run failed; the message will be received again', {
            error,
            custodyExportId,
            messageId: record.messageId,
          });
          batchItemFailures.push({ itemIdentifier: record.messageId });
        }
        continue;
      }
      const taggingJobId = taggingJobIdOf(record.body);
      if (taggingJobId) {
        try {
          // One batch (5,000 items, well under a second) at a time; it pauses between batches when time runs short.
          const outcome = await runTaggingJob(taggingJobId, {
            shouldPause: () => context.getRemainingTimeInMillis() < PAUSE_WITH_MS_LEFT,
          });
          if (outcome === 'paused') await enqueueTaggingJob(taggingJobId);
          logger.info('tagging job run', { taggingJobId, outcome, messageId: record.messageId });
        } catch (error) {
          logger.error('tagging job run failed; the message will be received again', {
            error,
            taggingJobId,
            messageId: record.messageId,
          });
          batchItemFailures.push({ itemIdentifier: record.messageId });
        }
        continue;
      }
      const importId = importIdOf(record.body);
      if (!importId) {
        logger.warn('import queue message without an import id: dropped', { messageId: record.messageId });
        continue;
      }
      try {
        // A run does at least one step (a copy segment of up to 1 GiB, or one batch) before it may
        // pause: one that arrives with the invocation nearly over goes back to the queue instead.
        if (context.getRemainingTimeInMillis() < PAUSE_WITH_MS_LEFT) {
          await enqueueImport(importId);
          logger.info('import sent back to the queue: too little time left to start it', { importId });
          continue;
        }
        // runImport acts as the system (its events name the import; each item, the import's creator).
        const outcome = await runImport(importId, {
          shouldPause: () => context.getRemainingTimeInMillis() < PAUSE_WITH_MS_LEFT,
        });
        if (outcome === 'paused') await enqueueImport(importId);
        logger.info('import run', { importId, outcome, messageId: record.messageId });
      } catch (error) {
        logger.error('import run failed; the message will be received again', {
          error,
          importId,
          messageId: record.messageId,
        });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  } finally {
    logger.removeKeys(['requestId']);
  }
}

/** The Lambda handler: runMessages, traced, with the cold-start and import metrics (lib/observability). */
export const handler = observed(runMessages);
