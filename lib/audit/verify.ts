import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { now } from '../clock';
import { db, type Tx } from '../db/client';
import { auditChainHeads, auditEvents, auditVerificationCheckpoints } from '../db/schema/audit';
import { isUuid } from '../ids';
import { type ChainedEvent, eventHash, GENESIS_HASH } from './chain';

export interface ChainVerification {
  /** Every event checks out and the last one is the recorded head. */
  valid: boolean;
  /** Events read and checked, up to and including the first invalid one (all of them when valid). */
  checkedEvents: number;
  /**
   * The head as audit_chain_heads records it: the sequence and hash the next event chains from.
   * An organization with no events has sequence 0 and GENESIS_HASH, what its first event chains from.
   */
  headSequence: number;
  headHash: string;
  /**
   * The first sequence that is missing or wrong: an event whose sequence, prevHash or hash does not
   * hold, the first event of a removed tail (the head is further on), or the first event past a
   * head that was set back. Null when valid.
   */
  firstInvalidSequence: number | null;
}

/** A verified point of a chain: every event from the first through `sequence`, the last hashing to `hash`. */
export interface ChainPoint {
  sequence: number;
  hash: string;
}

export interface FullVerificationResult {
  startedAt: string;
  finishedAt: string;
  /** The head it reached (valid) or the last event it read (invalid). */
  throughSequence: number;
  valid: boolean;
  firstInvalidSequence: number | null;
}

/** What a verify call answers: the chain since the checkpoint, and what the background verification found. */
export interface TrailVerification extends ChainVerification {
  /** The checkpoint this call started from (null: none yet, the call started from the first event). */
  checkpoint: (ChainPoint & { verifiedAt: string; method: 'incremental' | 'full' }) | null;
  /** Every event from the first through this one is verified, by the checkpoint and this call (before the first invalid one). */
  verifiedThroughSequence: number;
  /** Whether this call reached the head (false: more than INCREMENTAL_LIMIT events were appended since the checkpoint; the next call goes on). */
  complete: boolean;
  /** The last finished full re-verification (maintenance); a failed one makes every answer invalid. */
  lastFullVerification: FullVerificationResult | null;
  /** A full re-verification under way: when it started and how far it got. */
  runningFullVerification: { startedAt: string; throughSequence: number } | null;
}

/** Events read per query: bounded memory whatever the length of the chain. */
const BATCH_SIZE = 5_000;

/**
 * The most events one verify call checks past its checkpoint: well within a second (30-60 us an
 * event, test/bench/README.md), so the call answers in time however long the chain. More, and the
 * answer says `complete: false`; the next call (or the full verification) goes on from there.
 */
export const INCREMENTAL_LIMIT = 10_000;

const GENESIS: ChainPoint = { sequence: 0, hash: GENESIS_HASH };

type EventRow = typeof auditEvents.$inferSelect;

/** What walking a chain from a verified point found. */
interface Walk {
  checked: number;
  /** The last event that checks out (or `from`). */
  last: ChainPoint;
  firstInvalidSequence: number | null;
  /** All events after `from` were read (fewer than the limit were left). */
  reachedEnd: boolean;
}

/**
 * Walks the events after `from` in sequence order: each must follow the previous one (sequence + 1,
 * prevHash = the previous hash) and hash to its `hash`. Reads in batches by sequence (keyset);
 * stops at the first invalid event or after `limit` events.
 */
export async function walkChain(
  tx: Tx,
  organizationId: string,
  from: ChainPoint,
  options: { batchSize?: number; limit?: number } = {},
): Promise<Walk> {
  const batchSize = options.batchSize ?? BATCH_SIZE;
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  let previous = from;
  let checked = 0;
  for (;;) {
    const size = Math.min(batchSize, limit - checked);
    if (size <= 0) return { checked, last: previous, firstInvalidSequence: null, reachedEnd: false };
    const batch = await eventsAfter(tx, organizationId, previous.sequence, size);
    for (const event of batch) {
      checked += 1;
      const expected = previous.sequence + 1;
      if (event.sequence !== expected || event.prevHash !== previous.hash || !hashHolds(event))
        return { checked, last: previous, firstInvalidSequence: expected, reachedEnd: false };
      previous = { sequence: event.sequence, hash: event.hash };
    }
    if (batch.length < size) return { checked, last: previous, firstInvalidSequence: null, reachedEnd: true };
  }
}

/** The first invalid sequence when the events end at `last` but the head says otherwise, else null. */
export function headMismatch(last: ChainPoint, head: ChainPoint): number | null {
  if (last.sequence < head.sequence) return last.sequence + 1;
  if (last.sequence > head.sequence) return head.sequence + 1;
  if (last.hash !== head.hash) return Math.max(head.sequence, 1);
  return null;
}

/**
 * Whether the event at `point.sequence` still has `point.hash` and hashes to it: a checkpoint is
 * only worth building on while the event it names is unchanged. The genesis point always holds.
 */
export async function pointHolds(tx: Tx, organizationId: string, point: ChainPoint): Promise<boolean> {
  if (point.sequence === 0) return point.hash === GENESIS_HASH;
  const [event] = await tx
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.organizationId, organizationId), eq(auditEvents.sequence, point.sequence)));
  return event !== undefined && event.hash === point.hash && hashHolds(event);
}

function hashHolds(event: EventRow): boolean {
  return eventHash(event as ChainedEvent) === event.hash;
}

export async function readHead(tx: Tx, organizationId: string): Promise<ChainPoint> {
  const [head] = await tx
    .select({ sequence: auditChainHeads.sequence, hash: auditChainHeads.hash })
    .from(auditChainHeads)
    .where(eq(auditChainHeads.organizationId, organizationId));
  return head ?? GENESIS;
}

/**
 * Recomputes an organization's whole hash chain from its first event, in one read-only
 * repeatable-read snapshot (events committed meanwhile are not half seen), and compares the last
 * event with the head recorded in audit_chain_heads, so a removed tail shows. Stops at the first
 * invalid event. Writes nothing: the CLI's `audit verify` (an auditor's own check); the route
 * answers from the checkpoint (verifyAuditTrail). An id that is not a UUID has no events: valid,
 * like an organization with none.
 */
export async function verifyAuditChain(
  organizationId: string,
  options: { batchSize?: number } = {},
): Promise<ChainVerification> {
  if (!isUuid(organizationId)) return emptyChain();
  const id = organizationId.toLowerCase();
  return snapshot(async (tx) => {
    const head = await readHead(tx, id);
    const walk = await walkChain(tx, id, GENESIS, options);
    const firstInvalidSequence = walk.firstInvalidSequence ?? headMismatch(walk.last, head);
    return chainAnswer(walk.checked, head, firstInvalidSequence);
  });
}

/**
 * GET .../audit-events/verify: checks only what was appended since the organization's checkpoint,
 * after checking that the checkpoint's event still has the checkpoint's hash, then moves the
 * checkpoint on (never back: a conditional upsert, so concurrent calls cannot set it back or fork
 * it). At most INCREMENTAL_LIMIT events a call. A failed full re-verification (maintenance, which
 * also finds a change before the checkpoint) makes the answer invalid whatever this call found.
 */
export async function verifyAuditTrail(
  organizationId: string,
  options: { batchSize?: number; limit?: number } = {},
): Promise<TrailVerification> {
  if (!isUuid(organizationId)) return emptyTrail();
  const id = organizationId.toLowerCase();
  const { answer, advanceTo } = await snapshot(async (tx) => {
    const head = await readHead(tx, id);
    const [row] = await tx
      .select()
      .from(auditVerificationCheckpoints)
      .where(eq(auditVerificationCheckpoints.organizationId, id));
    const from: ChainPoint = row ? { sequence: row.sequence, hash: row.hash } : GENESIS;
    let walk: Walk = { checked: 0, last: from, firstInvalidSequence: null, reachedEnd: false };
    if (!(await pointHolds(tx, id, from))) walk.firstInvalidSequence = Math.max(from.sequence, 1);
    else
      walk = await walkChain(tx, id, from, { batchSize: options.batchSize, limit: options.limit ?? INCREMENTAL_LIMIT });
    const found = walk.firstInvalidSequence ?? (walk.reachedEnd ? headMismatch(walk.last, head) : null);
    const failedFull = row?.lastFullValid === false ? row.lastFullFirstInvalidSequence : null;
    const firstInvalidSequence =
      found !== null && failedFull !== null ? Math.min(found, failedFull) : (found ?? failedFull);
    const complete = walk.reachedEnd || walk.firstInvalidSequence !== null;
    const answer: TrailVerification = {
      ...chainAnswer(walk.checked, head, firstInvalidSequence),
      checkpoint: row
        ? { sequence: row.sequence, hash: row.hash, verifiedAt: row.verifiedAt.toISOString(), method: row.method }
        : null,
      verifiedThroughSequence:
        firstInvalidSequence === null ? walk.last.sequence : Math.min(walk.last.sequence, firstInvalidSequence - 1),
      complete,
      lastFullVerification: row ? lastFullOf(row) : null,
      runningFullVerification:
        row?.fullStartedAt && row.fullCursorSequence !== null
          ? { startedAt: row.fullStartedAt.toISOString(), throughSequence: row.fullCursorSequence }
          : null,
    };
    // Only a chain found sound so far moves the checkpoint; the answer stays invalid if a full pass failed.
    return { answer, advanceTo: found === null && walk.last.sequence > from.sequence ? walk.last : null };
  });
  if (advanceTo) await advanceCheckpoint(id, advanceTo, 'incremental');
  return answer;
}

/**
 * Moves the organization's checkpoint to `point` if that is further on than where it is: one
 * INSERT … ON CONFLICT DO UPDATE … WHERE, so of two calls at once the further point wins and the
 * checkpoint never moves back (the row lock orders them; the WHERE is re-checked after the wait).
 * Answers whether it moved.
 */
export async function advanceCheckpoint(
  organizationId: string,
  point: ChainPoint,
  method: 'incremental' | 'full',
  tx: Pick<Tx, 'insert'> = db(),
): Promise<boolean> {
  const moved = await tx
    .insert(auditVerificationCheckpoints)
    .values({ organizationId, sequence: point.sequence, hash: point.hash, verifiedAt: now(), method })
    .onConflictDoUpdate({
      target: auditVerificationCheckpoints.organizationId,
      set: { sequence: point.sequence, hash: point.hash, verifiedAt: now(), method },
      setWhere: sql`${auditVerificationCheckpoints.sequence} < ${point.sequence}`,
    })
    .returning({ sequence: auditVerificationCheckpoints.sequence });
  return moved.length > 0;
}

function lastFullOf(row: typeof auditVerificationCheckpoints.$inferSelect): FullVerificationResult | null {
  if (!row.lastFullStartedAt || !row.lastFullFinishedAt || row.lastFullValid === null) return null;
  return {
    startedAt: row.lastFullStartedAt.toISOString(),
    finishedAt: row.lastFullFinishedAt.toISOString(),
    throughSequence: row.lastFullThroughSequence ?? 0,
    valid: row.lastFullValid,
    firstInvalidSequence: row.lastFullFirstInvalidSequence,
  };
}

/** `work` in one read-only repeatable-read snapshot: events committed meanwhile are not half seen. */
export function snapshot<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
  return db().transaction(work, { isolationLevel: 'repeatable read', accessMode: 'read only' });
}

function chainAnswer(checkedEvents: number, head: ChainPoint, firstInvalidSequence: number | null): ChainVerification {
  return {
    valid: firstInvalidSequence === null,
    checkedEvents,
    headSequence: head.sequence,
    headHash: head.hash,
    firstInvalidSequence,
  };
}

function eventsAfter(tx: Tx, organizationId: string, sequence: number, limit: number) {
  return tx
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.organizationId, organizationId), gt(auditEvents.sequence, sequence)))
    .orderBy(asc(auditEvents.sequence))
    .limit(limit);
}

function emptyChain(): ChainVerification {
  return { valid: true, checkedEvents: 0, headSequence: 0, headHash: GENESIS_HASH, firstInvalidSequence: null };
}

function emptyTrail(): TrailVerification {
  return {
    ...emptyChain(),
    checkpoint: null,
    verifiedThroughSequence: 0,
    complete: true,
    lastFullVerification: null,
    runningFullVerification: null,
  };
}

/** Every organization with an audit trail (a chain head or events), in id order: what the CLI verifies. */
export async function organizationsWithAuditEvents(): Promise<string[]> {
  const rows = await db()
    .select({ organizationId: auditChainHeads.organizationId })
    .from(auditChainHeads)
    .union(db().selectDistinct({ organizationId: auditEvents.organizationId }).from(auditEvents));
  return rows.map((row) => row.organizationId).sort();
}
