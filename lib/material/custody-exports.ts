import { and, desc, eq, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { recordAudit } from '../audit/record';
import { SYSTEM_ACTOR, withAuditScope } from '../audit/scope';
import type { Actor } from '../auth/actor';
import type { CaseContext } from '../cases/context';
import { addSeconds, now } from '../clock';
import { config } from '../config';
import { db } from '../db/client';
import { cases } from '../db/schema/cases';
import { type CustodyExportVolume, custodyExports } from '../db/schema/custody';
import { transaction } from '../db/transaction';
import { idEquals } from '../ids';
import { logger } from '../log';
import { traced } from '../observability/tracing';
import { objectStorage } from '../storage/configured-storage';
import { generatedDocument } from '../storage/generated-documents';
import {
  CUSTODY_LINK_SECONDS,
  CUSTODY_READ_CHUNK,
  type CustodyEvent,
  type CustodyItem,
  custodyCovers,
  custodyEventPage,
  custodyItemPage,
  custodyLimits,
  custodySummary,
  itemCursor,
  itemPositionOf,
} from './custody';
import { CustodyExportNotFoundError } from './errors';

/**
 * What one volume holds at most, counted in item lines: an item weighs 1, an event EVENT_WEIGHT
 * (its five or more lines): custodyLimits.volumeWeight, 200,000. pdf-lib keeps a whole document in memory, about 1 KB an item and 5 KB
 * an event (docs/decisions.md, issue 32), so a volume stays near 200 MB whatever the case's size.
 */
export const EVENT_WEIGHT = 5;
/** A run holds its export this long; one whose worker died is taken up again after it. */
const LEASE_SECONDS = 16 * 60;
/** Runs that end without finishing (a lost worker, an error) before the export fails. */
export const MAX_CUSTODY_EXPORT_ATTEMPTS = 3;

type ExportRow = typeof custodyExports.$inferSelect;
export type CustodyExportRunOutcome = 'succeeded' | 'failed' | 'paused' | 'skipped';

const weightOf = (row: Pick<ExportRow, 'itemTotal' | 'eventTotal'>) => row.itemTotal + EVENT_WEIGHT * row.eventTotal;

/** The answer of both routes; links to the volumes only when `links` (reading a finished export). */
async function exportEntity(row: ExportRow, links: boolean) {
  const at = now();
  const expired = row.status === 'succeeded' && row.volumes.some((volume) => new Date(volume.expiresAt) <= at);
  const written = row.itemsWritten + EVENT_WEIGHT * row.eventsWritten;
  const total = weightOf(row);
  const storage = objectStorage();
  return {
    id: row.id,
    caseId: row.caseId,
    status: expired ? ('expired' as const) : row.status,
    createdAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
    asOf: row.asOf.toISOString(),
    chainHead: { sequence: row.chainHeadSequence, hash: row.chainHeadHash },
    progress: {
      itemsWritten: row.itemsWritten,
      itemTotal: row.itemTotal,
      eventsWritten: row.eventsWritten,
      eventTotal: row.eventTotal,
      volumesWritten: row.volumes.length,
      percent: row.status === 'succeeded' ? 100 : total === 0 ? 0 : Math.min(99, Math.floor((100 * written) / total)),
    },
    error: row.error ?? null,
    volumes: expired
      ? []
      : await Promise.all(
          row.volumes.map(async (volume) => ({
            volume: volume.volume,
            fileName: volume.fileName,
            sizeBytes: volume.sizeBytes,
            items: volume.items,
            events: volume.events,
            downloadUrl:
              links && row.status === 'succeeded'
                ? await storage.downloadUrl(volume.objectKey, CUSTODY_LINK_SECONDS)
                : null,
            expiresAt: links && row.status === 'succeeded' ? addSeconds(at, CUSTODY_LINK_SECONDS).toISOString() : null,
          })),
        ),
  };
}

export type CustodyExportAnswer = Awaited<ReturnType<typeof exportEntity>>;

/**
 * POST /cases/{caseId}/custody/exports (extension): starts the background export of the case's
 * custody record as PDF volumes (202). Idempotent on what it covers (custodyCovers: the case's last
 * event but custody reads): while an export of the same state is queued or running, or finished
 * with its volumes kept at least a link's life, that export is answered and nothing new starts
 * (nor is recorded). Otherwise the snapshot is fixed now (items imported up to now, events up to
 * the chain head), `evidence.custody.export_started` recorded, and the worker sent the export.
 */
export async function startCustodyExport(ctx: {
  caseContext: CaseContext;
  actor: Actor;
}): Promise<CustodyExportAnswer> {
  const { id: caseId, organizationId } = ctx.caseContext.case;
  const covers = await custodyCovers(caseId, organizationId);
  const existing = await reusableExport(caseId, covers);
  if (existing) return exportEntity(existing, false);
  const row = await transaction(async (tx, afterCommit) => {
    const summary = await custodySummary(tx, caseId, organizationId);
    const [created] = await tx
      .insert(custodyExports)
      .values({
        organizationId,
        caseId,
        requestedById: ctx.actor.user.id,
        status: 'queued',
        covers,
        asOf: now(),
        chainHeadSequence: summary.chainHead.sequence,
        chainHeadHash: summary.chainHead.hash,
        itemTotal: summary.itemCount,
        eventTotal: summary.eventCount,
      })
      .onConflictDoNothing()
      .returning();
    // Another start of the same state won the race: its export is the answer.
    if (!created) return null;
    recordAudit(tx, {
      action: 'evidence.custody.export_started',
      organizationId,
      caseId,
      target: { type: 'custody_export', id: created.id },
      metadata: { itemTotal: created.itemTotal, eventTotal: created.eventTotal },
    });
    afterCommit(() => enqueueCustodyExport(created.id));
    return created;
  });
  const answered = row ?? (await reusableExport(caseId, covers));
  if (!answered) throw new Error('A concurrent custody export vanished');
  return exportEntity(answered, false);
}

async function reusableExport(caseId: string, covers: string): Promise<ExportRow | undefined> {
  const keptUntil = addSeconds(now(), CUSTODY_LINK_SECONDS).toISOString();
  const [row] = await db()
    .select()
    .from(custodyExports)
    .where(
      and(
        eq(custodyExports.caseId, caseId),
        eq(custodyExports.covers, covers),
        or(
          inArray(custodyExports.status, ['queued', 'running']),
          and(
            eq(custodyExports.status, 'succeeded'),
            // Every volume still kept a link's life (the earliest expires first).
            sql`not exists (select 1 from jsonb_array_elements(${custodyExports.volumes}) v where (v->>'expiresAt')::timestamptz <= ${keptUntil}::timestamptz)`,
          ),
        ),
      ),
    )
    .orderBy(desc(custodyExports.createdAt))
    .limit(1);
  return row;
}

/**
 * GET /cases/{caseId}/custody/exports/{exportId} (extension): status and progress; once succeeded,
 * a time-limited link to each volume (`expired` once the volumes were removed, after a week).
 */
export async function getCustodyExport(
  ctx: { caseContext: CaseContext },
  exportId: string,
): Promise<CustodyExportAnswer> {
  const [row] = await db()
    .select()
    .from(custodyExports)
    .where(and(eq(custodyExports.caseId, ctx.caseContext.case.id), idEquals(custodyExports.id, exportId)))
    .limit(1);
  if (!row) throw new CustodyExportNotFoundError();
  return exportEntity(row, true);
}

/** Takes the export for this run: queued, or running with its lease lapsed (its worker died). */
async function claimExport(exportId: string): Promise<ExportRow | undefined> {
  const at = now();
  const [row] = await db()
    .update(custodyExports)
    .set({
      status: 'running',
      attempts: sql`${custodyExports.attempts} + 1`,
      leaseUntil: addSeconds(at, LEASE_SECONDS),
    })
    .where(
      and(
        idEquals(custodyExports.id, exportId),
        or(
          eq(custodyExports.status, 'queued'),
          and(
            eq(custodyExports.status, 'running'),
            or(isNull(custodyExports.leaseUntil), lt(custodyExports.leaseUntil, at)),
          ),
        ),
      ),
    )
    .returning();
  return row;
}

/** The records of the next volume from the export's checkpoint, read in one snapshot. */
async function nextVolume(job: ExportRow) {
  return db().transaction(
    async (tx) => {
      const items: CustodyItem[] = [];
      const events: CustodyEvent[] = [];
      let itemCursorText = job.itemCursor;
      let itemsDone = job.itemsDone === 1;
      let eventCursor = job.eventCursor;
      let eventsDone = false;
      let room = custodyLimits.volumeWeight;
      while (!itemsDone && room > 0) {
        const page = await custodyItemPage(
          tx,
          job.caseId,
          itemCursorText ? itemPositionOf(itemCursorText) : null,
          Math.min(CUSTODY_READ_CHUNK, room),
          job.asOf,
        );
        items.push(...page.items);
        room -= page.items.length;
        if (page.next) itemCursorText = itemCursor(page.next);
        else itemsDone = true;
      }
      while (itemsDone && !eventsDone && room >= EVENT_WEIGHT) {
        const page = await custodyEventPage(
          tx,
          job.caseId,
          job.organizationId,
          eventCursor,
          Math.min(CUSTODY_READ_CHUNK, Math.floor(room / EVENT_WEIGHT)),
          job.chainHeadSequence,
        );
        events.push(...page.events);
        room -= EVENT_WEIGHT * page.events.length;
        if (page.events.length > 0) eventCursor = page.events.at(-1)!.sequence;
        if (page.next === null) eventsDone = true;
      }
      return { items, events, itemCursorText, itemsDone, eventCursor, eventsDone };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/**
 * The worker's run of one export (infra/functions/import-worker.ts in the cloud, this process
 * locally): one volume at a time from its checkpoint, each rendered, stored as a generated
 * document (a week, counted in the organization's storage) and recorded with the checkpoint in one
 * statement, so a lost worker repeats at most the volume in flight. With `shouldPause` true between
 * volumes the export goes back to `queued` ('paused'), and the caller sends it to the queue again.
 */
export async function runCustodyExport(
  exportId: string,
  options: { shouldPause?: () => boolean } = {},
): Promise<CustodyExportRunOutcome> {
  const claimed = await claimExport(exportId);
  if (!claimed) return 'skipped';
  return withAuditScope({ actor: SYSTEM_ACTOR, ip: null, userAgent: null, requestId: claimed.id }, async () => {
    let job = claimed;
    if (job.attempts > MAX_CUSTODY_EXPORT_ATTEMPTS)
      return finish(job, {
        code: 'ATTEMPTS_EXHAUSTED',
        message: `The export was started ${MAX_CUSTODY_EXPORT_ATTEMPTS} times without finishing`,
      });
    const [caseRow] = await db().select({ name: cases.name }).from(cases).where(eq(cases.id, job.caseId));
    if (!caseRow) return finish(job, { code: 'NOT_FOUND', message: 'The case was deleted' });
    const { renderCustodyPdf } = await import('./custody-pdf');
    try {
      for (;;) {
        const next = await nextVolume(job);
        const number = job.volumes.length + 1;
        const generatedAt = now();
        const fileName = `custody-${job.caseId}-${job.asOf.toISOString().slice(0, 10)}-volume-${number}.pdf`;
        const document = await generatedDocument({
          organizationId: job.organizationId,
          caseId: job.caseId,
          kind: 'custody',
          covers: `${job.covers}\nexport ${job.id} volume ${number}`,
          fileName,
          contentType: 'application/pdf',
          linkSeconds: CUSTODY_LINK_SECONDS,
          render: async () => ({
            bytes: await renderCustodyPdf(
              {
                caseId: job.caseId,
                caseName: caseRow.name,
                items: next.items,
                events: next.events,
                chainHead: { sequence: job.chainHeadSequence, hash: job.chainHeadHash },
                volume: {
                  number,
                  itemsBefore: job.itemsWritten,
                  itemTotal: Math.max(job.itemTotal, job.itemsWritten + next.items.length),
                  eventsBefore: job.eventsWritten,
                  eventTotal: job.eventTotal,
                },
              },
              generatedAt,
            ),
            details: { exportId: job.id, volume: number },
          }),
        });
        const volume: CustodyExportVolume = {
          volume: number,
          documentId: document.id,
          objectKey: document.objectKey,
          fileName,
          sizeBytes: document.bytes,
          items: next.items.length,
          events: next.events.length,
          expiresAt: document.expiresAt.toISOString(),
        };
        const done = next.itemsDone && next.eventsDone;
        const [saved] = await db()
          .update(custodyExports)
          .set({
            volumes: sql`${custodyExports.volumes} || ${JSON.stringify([volume])}::jsonb`,
            itemCursor: next.itemCursorText,
            itemsDone: next.itemsDone ? 1 : 0,
            eventCursor: next.eventCursor,
            itemsWritten: job.itemsWritten + next.items.length,
            eventsWritten: job.eventsWritten + next.events.length,
            leaseUntil: addSeconds(now(), LEASE_SECONDS),
          })
          .where(and(eq(custodyExports.id, job.id), eq(custodyExports.status, 'running')))
          .returning();
        if (!saved) return 'skipped';
        job = saved;
        if (done) return finish(job, null);
        if (options.shouldPause?.()) {
          await db()
            .update(custodyExports)
            // A pause is not an attempt: only runs that end without finishing count.
            .set({ status: 'queued', leaseUntil: null, attempts: sql`${custodyExports.attempts} - 1` })
            .where(eq(custodyExports.id, job.id));
          return 'paused';
        }
      }
    } catch (error) {
      logger.error('custody export failed', { error, exportId: job.id });
      return finish(job, { code: 'INTERNAL', message: 'The export failed unexpectedly; start it again' });
    }
  });
}

/** Ends the export (succeeded when `error` is null) and records `evidence.custody.export_finished`. */
async function finish(
  job: ExportRow,
  error: { code: string; message: string } | null,
): Promise<CustodyExportRunOutcome> {
  await transaction(async (tx) => {
    await tx
      .update(custodyExports)
      .set({ status: error ? 'failed' : 'succeeded', error, finishedAt: now(), leaseUntil: null })
      .where(eq(custodyExports.id, job.id));
    recordAudit(tx, {
      action: 'evidence.custody.export_finished',
      organizationId: job.organizationId,
      caseId: job.caseId,
      target: { type: 'custody_export', id: job.id },
      metadata: error
        ? { status: 'failed', error: error.code }
        : {
            status: 'succeeded',
            volumes: job.volumes.length,
            itemsWritten: job.itemsWritten,
            eventsWritten: job.eventsWritten,
            chainHeadSequence: job.chainHeadSequence,
          },
    });
  });
  return error ? 'failed' : 'succeeded';
}

let sqs: import('@aws-sdk/client-sqs').SQSClient | undefined;
/** Exports this process runs (no queue: the local server, the tests), until they settle. */
const localRuns = new Set<Promise<void>>();

/**
 * Hands an export to the worker: `{ custodyExportId }` on the import queue in the cloud (the
 * import worker function runs both kinds of job), else a run in this process. Called after the
 * export's `queued` state committed; maintenance sends again one never taken up or whose worker died.
 */
export async function enqueueCustodyExport(exportId: string): Promise<void> {
  const queueUrl = config().IMPORT_QUEUE_URL;
  if (queueUrl) {
    const { SQSClient, SendMessageCommand } = await import('@aws-sdk/client-sqs');
    sqs ??= traced(new SQSClient({}));
    await sqs.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ custodyExportId: exportId }) }),
    );
    return;
  }
  const run = (async () => {
    try {
      while ((await runCustodyExport(exportId)) === 'paused');
    } catch (error) {
      logger.error('local custody export failed', { error, exportId });
    }
  })();
  localRuns.add(run);
  void run.finally(() => localRuns.delete(run));
}

/** Resolves once every export this process started has settled (the tests). */
export async function drainCustodyExports(): Promise<void> {
  while (localRuns.size > 0) await Promise.all([...localRuns]);
}

/** A queued export no worker took within this long, or a running one whose lease lapsed, is sent again. */
const STALLED_AFTER_SECONDS = 15 * 60;

/** Maintenance: sends again exports left queued or whose worker's lease lapsed. Returns how many. */
export async function requeueStalledCustodyExports(): Promise<number> {
  const at = now();
  const stalled = await db()
    .select({ id: custodyExports.id })
    .from(custodyExports)
    .where(
      or(
        and(eq(custodyExports.status, 'queued'), lt(custodyExports.updatedAt, addSeconds(at, -STALLED_AFTER_SECONDS))),
        and(
          eq(custodyExports.status, 'running'),
          or(isNull(custodyExports.leaseUntil), lt(custodyExports.leaseUntil, at)),
        ),
      ),
    )
    .limit(100);
  for (const { id } of stalled) await enqueueCustodyExport(id);
  return stalled.length;
}
