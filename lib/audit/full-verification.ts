import { and, asc, eq, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db } from '../db/client';
import { auditChainHeads, auditVerificationCheckpoints } from '../db/schema/audit';
import { GENESIS_HASH } from './chain';
import { advanceCheckpoint, type ChainPoint, headMismatch, pointHolds, readHead, snapshot, walkChain } from './verify';

/** A finished, valid full re-verification is started again after this long. */
export const FULL_VERIFICATION_EVERY_HOURS = 24;
/** Events one maintenance run re-verifies at most, all organizations together: a run stays short (about 2 s here). */
export const FULL_VERIFICATION_EVENTS_PER_RUN = 50_000;
/** Organizations one run looks at, at most: each costs a few queries even with a short chain. */
const ORGANIZATIONS_PER_RUN = 50;
/** Events per batch, each batch in a snapshot of its own. */
const BATCH_SIZE = 5_000;

const checkpoints = auditVerificationCheckpoints;

/**
 * Maintenance: goes on with the full re-verification of the organizations' chains from their first
 * event, in batches (one snapshot each), resumable across runs (the cursor is kept in
 * audit_verification_checkpoints), at most `maxEvents` events a run. Runs in progress first, then
 * organizations never fully verified, then the longest ago; one whose last full verification failed
 * is not verified again (the failure stays the answer until an operator has looked). Finishing
 * records the result (started, finished, valid or the first invalid sequence) and, when valid,
 * moves the checkpoint up to the head it reached. Answers the number of events checked.
 */
export async function continueFullVerifications(
  options: { maxEvents?: number; batchSize?: number; organizationId?: string } = {},
): Promise<number> {
  const maxEvents = options.maxEvents ?? FULL_VERIFICATION_EVENTS_PER_RUN;
  const organizations = options.organizationId ? [options.organizationId] : await dueOrganizations();
  let checked = 0;
  for (const organizationId of organizations) {
    if (checked >= maxEvents) break;
    checked += await continueOne(organizationId, maxEvents - checked, options.batchSize ?? BATCH_SIZE);
  }
  return checked;
}

async function dueOrganizations(): Promise<string[]> {
  const dueBefore = addSeconds(now(), -FULL_VERIFICATION_EVERY_HOURS * 3600);
  const rows = await db()
    .select({ organizationId: auditChainHeads.organizationId })
    .from(auditChainHeads)
    .leftJoin(checkpoints, eq(checkpoints.organizationId, auditChainHeads.organizationId))
    .where(
      or(
        isNull(checkpoints.organizationId),
        isNotNull(checkpoints.fullStartedAt),
        and(
          sql`${checkpoints.lastFullValid} is distinct from false`,
          or(isNull(checkpoints.lastFullFinishedAt), lt(checkpoints.lastFullFinishedAt, dueBefore)),
        ),
      ),
    )
    .orderBy(
      sql`${checkpoints.fullStartedAt} is null`,
      sql`${checkpoints.lastFullFinishedAt} asc nulls first`,
      asc(auditChainHeads.organizationId),
    )
    .limit(ORGANIZATIONS_PER_RUN);
  return rows.map((row) => row.organizationId);
}

/** Starts (unless running) and goes on with one organization's full verification; answers the events checked. */
async function continueOne(organizationId: string, maxEvents: number, batchSize: number): Promise<number> {
  const startedAt = now();
  const dueBefore = addSeconds(startedAt, -FULL_VERIFICATION_EVERY_HOURS * 3600);
  const genesis = { fullStartedAt: startedAt, fullCursorSequence: 0, fullCursorHash: GENESIS_HASH };
  // Starts one unless one is running or the last is recent; never over a failed one (the trigger would refuse its result anyway).
  await db()
    .insert(checkpoints)
    .values({ organizationId, sequence: 0, hash: GENESIS_HASH, verifiedAt: startedAt, method: 'full', ...genesis })
    .onConflictDoUpdate({
      target: checkpoints.organizationId,
      set: genesis,
      setWhere: and(
        isNull(checkpoints.fullStartedAt),
        sql`${checkpoints.lastFullValid} is distinct from false`,
        or(isNull(checkpoints.lastFullFinishedAt), lt(checkpoints.lastFullFinishedAt, dueBefore)),
      ),
    });
  const [row] = await db().select().from(checkpoints).where(eq(checkpoints.organizationId, organizationId));
  if (!row?.fullStartedAt || row.fullCursorSequence === null || row.fullCursorHash === null) return 0;
  const run = row.fullStartedAt;
  let cursor: ChainPoint = { sequence: row.fullCursorSequence, hash: row.fullCursorHash };
  let checked = 0;
  while (checked < maxEvents) {
    const step = await snapshot(async (tx) => {
      const head = await readHead(tx, organizationId);
      const walk = await walkChain(tx, organizationId, cursor, {
        batchSize,
        limit: Math.min(batchSize, maxEvents - checked),
      });
      if (walk.firstInvalidSequence !== null || !walk.reachedEnd)
        return { walk, firstInvalid: walk.firstInvalidSequence };
      // The whole chain holds: it must end at the head, and still pass through the checkpoint.
      const [mark] = await tx
        .select({ sequence: checkpoints.sequence, hash: checkpoints.hash })
        .from(checkpoints)
        .where(eq(checkpoints.organizationId, organizationId));
      const atHead = headMismatch(walk.last, head);
      const atCheckpoint = mark && !(await pointHolds(tx, organizationId, mark)) ? Math.max(mark.sequence, 1) : null;
      const firstInvalid =
        atHead !== null && atCheckpoint !== null ? Math.min(atHead, atCheckpoint) : (atHead ?? atCheckpoint);
      return { walk, firstInvalid, finished: true };
    });
    checked += step.walk.checked;
    const ours = and(
      eq(checkpoints.organizationId, organizationId),
      eq(checkpoints.fullStartedAt, run),
      eq(checkpoints.fullCursorSequence, cursor.sequence),
    );
    if (step.firstInvalid !== null || 'finished' in step) {
      const valid = step.firstInvalid === null;
      const recorded = await db()
        .update(checkpoints)
        .set({
          fullStartedAt: null,
          fullCursorSequence: null,
          fullCursorHash: null,
          lastFullStartedAt: run,
          lastFullFinishedAt: now(),
          lastFullThroughSequence: step.walk.last.sequence,
          lastFullValid: valid,
          lastFullFirstInvalidSequence: step.firstInvalid,
        })
        .where(ours)
        .returning({ organizationId: checkpoints.organizationId });
      if (valid && recorded.length > 0) await advanceCheckpoint(organizationId, step.walk.last, 'full');
      return checked;
    }
    // Another run moving the same cursor (two maintenance runs at once): leave it the organization.
    const moved = await db()
      .update(checkpoints)
      .set({ fullCursorSequence: step.walk.last.sequence, fullCursorHash: step.walk.last.hash })
      .where(ours)
      .returning({ organizationId: checkpoints.organizationId });
    if (moved.length === 0) return checked;
    cursor = step.walk.last;
  }
  return checked;
}
