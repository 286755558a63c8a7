import { and, eq, lt, or, sql } from 'drizzle-orm';
import type { TaggingFilterInput } from '../../../schemas/review/tagging';
import { recordAudit } from '../../audit/record';
import { SYSTEM_ACTOR, withAuditScope } from '../../audit/scope';
import type { Actor } from '../../auth/actor';
import type { CaseContext } from '../../cases/context';
import { addSeconds, now } from '../../clock';
import { config } from '../../config';
import { db } from '../../db/client';
import { emailThreads } from '../../db/schema/material';
import { tags, taggingJobs } from '../../db/schema/review';
import { transaction } from '../../db/transaction';
import { idEquals, idIn } from '../../ids';
import { logger } from '../../log';
import { traced } from '../../observability/tracing';
import { type TagViewer, tagViewerOf, visibleTag } from '../tag-visibility';
import { applyTagging } from './apply-tagging';
import { countsOf, groupedChanges, tagDetails, taggingMetadata } from './audit';
import { checkTags } from './checks';
import { TaggingJobNotFoundError, TaggingThreadNotFoundError } from './errors';
import { selectorOf } from './selectors';

/**
 * Items one batch of a job tags, in one transaction with its progress and its audit event: large
 * enough that 100,000 emails take about twenty batches, small enough that a batch commits in well
 * under a second and a lost worker repeats little.
 */
export const TAGGING_BATCH_SIZE = 5000;
/** A running job whose worker wrote no progress for this long is taken up again (it died). */
const STALE_SECONDS = 120;
const NO_USER = '00000000-0000-0000-0000-000000000000';

type JobRow = typeof taggingJobs.$inferSelect;
export type TaggingJobRunOutcome = 'succeeded' | 'failed' | 'paused' | 'skipped';

/** The job entity; the tags of add and remove only as far as the reader may see them. */
function jobEntity(row: JobRow, visible: ReadonlySet<string> | null) {
  const shown = (ids: string[]) => (visible ? ids.filter((id) => visible.has(id)) : ids);
  return {
    id: row.id,
    status: row.status,
    totalItems: row.totalItems,
    processedItems: row.processedItems,
    addedLinks: row.addedLinks,
    removedLinks: row.removedLinks,
    error: row.error,
    add: shown(row.add),
    remove: shown(row.remove),
    filter: row.filter as TaggingFilterInput,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

export type TaggingJobAnswer = ReturnType<typeof jobEntity>;

/**
 * POST /cases/{caseId}/tagging with `filter`: checks the tags (as a tagging by items does) and the
 * filter's thread, stores the job `queued` with `evidence.tagged` (its tags and filter; only counts
 * and a hash for opposing counsel), and after commit hands it to the worker.
 */
export async function startTaggingJob(
  ctx: { caseContext: CaseContext; actor: Actor },
  input: { add: string[]; remove: string[]; filter: TaggingFilterInput },
): Promise<TaggingJobAnswer> {
  const viewer = tagViewerOf(ctx.caseContext, ctx.actor.user.id);
  const row = await transaction(async (tx, afterCommit) => {
    const checked = await checkTags(tx, viewer, input.add, input.remove);
    const filter = { ...input.filter };
    if (filter.kind === 'email' && filter.threadId !== undefined) {
      const [thread] = await tx
        .select({ id: emailThreads.id })
        .from(emailThreads)
        .where(and(idEquals(emailThreads.id, filter.threadId), eq(emailThreads.caseId, viewer.caseId)));
      if (!thread) throw new TaggingThreadNotFoundError();
      filter.threadId = thread.id;
    }
    const [created] = await tx
      .insert(taggingJobs)
      .values({
        organizationId: viewer.organizationId,
        caseId: viewer.caseId,
        createdById: viewer.userId,
        side: viewer.side,
        add: checked.add.map((t) => t.id),
        remove: checked.remove.map((t) => t.id),
        filter,
      })
      .returning();
    recordAudit(tx, {
      action: 'evidence.tagged',
      organizationId: viewer.organizationId,
      caseId: viewer.caseId,
      target: { type: 'tagging_job', id: created!.id },
      metadata: taggingMetadata(
        viewer.side,
        { job: created!.id, status: 'queued', addTags: checked.add.length, removeTags: checked.remove.length },
        { ...tagDetails(checked), filter },
      ),
    });
    afterCommit(() => enqueueTaggingJob(created!.id));
    return created!;
  });
  return jobEntity(row, null);
}

/**
 * GET /cases/{caseId}/tagging/{jobId} (extension): a job of the case and of the caller's side
 * (any other is 404), with its progress.
 */
export async function getTaggingJob(
  ctx: { caseContext: CaseContext; actor: Actor },
  jobId: string,
): Promise<TaggingJobAnswer> {
  const viewer = tagViewerOf(ctx.caseContext, ctx.actor.user.id);
  const [row] = await db()
    .select()
    .from(taggingJobs)
    .where(
      and(idEquals(taggingJobs.id, jobId), eq(taggingJobs.caseId, viewer.caseId), eq(taggingJobs.side, viewer.side)),
    );
  if (!row) throw new TaggingJobNotFoundError();
  const ids = [...row.add, ...row.remove];
  const visible = ids.length
    ? await db()
        .select({ id: tags.id })
        .from(tags)
        .where(and(idIn(tags.id, ids), visibleTag(viewer)))
    : [];
  return jobEntity(row, new Set(visible.map((t) => t.id)));
}

/** Takes the job for this run: queued, or running with no progress for a while (its worker died). */
async function claimJob(jobId: string): Promise<JobRow | undefined> {
  const at = now();
  const [row] = await db()
    .update(taggingJobs)
    .set({
      status: 'running',
      startedAt: sql`coalesce(${taggingJobs.startedAt}, ${at.toISOString()}::timestamptz)`,
      updatedAt: at,
    })
    .where(
      and(
        idEquals(taggingJobs.id, jobId),
        or(
          eq(taggingJobs.status, 'queued'),
          and(eq(taggingJobs.status, 'running'), lt(taggingJobs.updatedAt, addSeconds(at, -STALE_SECONDS))),
        ),
      ),
    )
    .returning();
  return row;
}

const viewerOfJob = (job: JobRow): TagViewer => ({
  organizationId: job.organizationId,
  caseId: job.caseId,
  side: job.side,
  userId: job.createdById ?? NO_USER,
});

/**
 * The worker's run of one job (infra/functions/import-worker.ts in the cloud, this process
 * locally): counts what the filter matches (once), then batch after batch from the job's cursor,
 * each in one transaction with its links, its progress and its `evidence.tagged` event (as the
 * system, naming the job). A lost worker repeats at most the batch in flight, which changes
 * nothing twice (links already added or removed are left). With `shouldPause` true between
 * batches the job goes back to `queued` ('paused') and the caller sends it again.
 */
export async function runTaggingJob(
  jobId: string,
  options: { shouldPause?: () => boolean; batchSize?: number } = {},
): Promise<TaggingJobRunOutcome> {
  const claimed = await claimJob(jobId);
  if (!claimed) return 'skipped';
  const batchSize = options.batchSize ?? TAGGING_BATCH_SIZE;
  return withAuditScope({ actor: SYSTEM_ACTOR, ip: null, userAgent: null, requestId: claimed.id }, async () => {
    let job = claimed;
    const viewer = viewerOfJob(job);
    const selector = selectorOf(viewer, job.filter as TaggingFilterInput);
    try {
      if (job.totalItems === null) {
        const totalItems = await selector.count(db());
        const [counted] = await db()
          .update(taggingJobs)
          .set({ totalItems, updatedAt: now() })
          .where(eq(taggingJobs.id, job.id))
          .returning();
        job = counted!;
      }
      for (;;) {
        const outcome = await transaction(async (tx) => {
          const batch = await selector.next(tx, job.cursor, batchSize);
          if (batch.ids.length === 0) return 'done' as const;
          const changes = await applyTagging(tx, {
            userId: job.createdById,
            add: job.add,
            remove: job.remove,
            items: { [batch.kind]: batch.ids },
          });
          const counts = countsOf(changes);
          const [saved] = await tx
            .update(taggingJobs)
            .set({
              processedItems: sql`${taggingJobs.processedItems} + ${batch.ids.length}`,
              addedLinks: sql`${taggingJobs.addedLinks} + ${counts.added}`,
              removedLinks: sql`${taggingJobs.removedLinks} + ${counts.removed}`,
              // Where the selector resumes; null once it has nothing after this batch.
              cursor: batch.cursor,
              updatedAt: now(),
            })
            .where(and(eq(taggingJobs.id, job.id), eq(taggingJobs.status, 'running')))
            .returning();
          if (!saved) return 'lost' as const;
          recordAudit(tx, {
            action: 'evidence.tagged',
            organizationId: job.organizationId,
            caseId: job.caseId,
            target: { type: 'tagging_job', id: job.id },
            metadata: taggingMetadata(
              job.side,
              { job: job.id, items: batch.ids.length, ...counts },
              { itemIds: { [batch.kind]: batch.ids }, changes: groupedChanges(changes) },
            ),
          });
          job = saved;
          return batch.cursor === null ? ('done' as const) : ('more' as const);
        });
        if (outcome === 'lost') return 'skipped';
        if (outcome === 'done') return finish(job, null);
        if (options.shouldPause?.()) {
          await db()
            .update(taggingJobs)
            .set({ status: 'queued', updatedAt: now() })
            .where(and(eq(taggingJobs.id, job.id), eq(taggingJobs.status, 'running')));
          return 'paused';
        }
      }
    } catch (error) {
      logger.error('tagging job failed', { error, jobId: job.id });
      return finish(job, 'The tagging job failed unexpectedly; start it again');
    }
  });
}

/** Ends the job (succeeded when `error` is null) and records `evidence.tagging_job.finished`. */
async function finish(job: JobRow, error: string | null): Promise<TaggingJobRunOutcome> {
  await transaction(async (tx) => {
    await tx
      .update(taggingJobs)
      .set({ status: error ? 'failed' : 'succeeded', error, finishedAt: now() })
      .where(eq(taggingJobs.id, job.id));
    recordAudit(tx, {
      action: 'evidence.tagging_job.finished',
      organizationId: job.organizationId,
      caseId: job.caseId,
      target: { type: 'tagging_job', id: job.id },
      metadata: {
        status: error ? 'failed' : 'succeeded',
        processedItems: job.processedItems,
        addedLinks: job.addedLinks,
        removedLinks: job.removedLinks,
      },
    });
  });
  return error ? 'failed' : 'succeeded';
}

let sqs: import('@aws-sdk/client-sqs').SQSClient | undefined;
/** Jobs this process runs (no queue: the local server, the tests), until they settle. */
const localRuns = new Set<Promise<void>>();

/**
 * Hands a job to the worker: `{ taggingJobId }` on the import queue in the cloud (the import
 * worker function runs it), else a run in this process, as custody exports go.
 */
export async function enqueueTaggingJob(jobId: string): Promise<void> {
  const queueUrl = config().IMPORT_QUEUE_URL;
  if (queueUrl) {
    const { SQSClient, SendMessageCommand } = await import('@aws-sdk/client-sqs');
    sqs ??= traced(new SQSClient({}));
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ taggingJobId: jobId }) }),
    );
    return;
  }
  const run = (async () => {
    try {
      while ((await runTaggingJob(jobId)) === 'paused');
    } catch (error) {
      logger.error('local tagging job failed', { error, jobId });
    }
  })();
  localRuns.add(run);
  void run.finally(() => localRuns.delete(run));
}

/** Resolves once every job this process started has settled (the tests). */
export async function drainTaggingJobs(): Promise<void> {
  while (localRuns.size > 0) await Promise.all([...localRuns]);
}

/** A queued job no worker took within this long is sent again (the message or the local process was lost). */
const QUEUED_STALLED_SECONDS = 15 * 60;

/**
 * Maintenance: sends again jobs left queued (a lost message, a restarted local server) and running
 * jobs with no progress for a while (a worker that died). Returns how many.
 */
export async function requeueStalledTaggingJobs(): Promise<number> {
  const at = now();
  const stalled = await db()
    .select({ id: taggingJobs.id })
    .from(taggingJobs)
    .where(
      or(
        and(eq(taggingJobs.status, 'queued'), lt(taggingJobs.updatedAt, addSeconds(at, -QUEUED_STALLED_SECONDS))),
        and(eq(taggingJobs.status, 'running'), lt(taggingJobs.updatedAt, addSeconds(at, -STALE_SECONDS))),
      ),
    )
    .limit(100);
  for (const { id } of stalled) await enqueueTaggingJob(id);
  return stalled.length;
}
