import { and, asc, eq, gt } from 'drizzle-orm';
import { db, type Tx } from '../db/client';
import { auditChainHeads, auditEvents } from '../db/schema';
import { isUuid } from '../ids';
import { eventHash, GENESIS_HASH } from './chain';

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

/** Events read per query: bounded memory whatever the length of the chain. */
const BATCH_SIZE = 5_000;

/**
 * Recomputes an organization's hash chain in sequence order: each event must follow the previous
 * one (sequence + 1 from 1, prevHash = the previous hash from GENESIS_HASH) and hash to its `hash`,
 * and the last one must be the head recorded in audit_chain_heads, so a removed tail shows. Read in
 * batches by sequence (keyset), in one read-only repeatable-read snapshot, so events committed
 * meanwhile are not half seen. Stops at the first invalid event. An id that is not a UUID has no
 * events: valid, like an organization with none.
 */
export async function verifyAuditChain(
  organizationId: string,
  options: { batchSize?: number } = {},
): Promise<ChainVerification> {
  if (!isUuid(organizationId)) return emptyChain();
  const id = organizationId.toLowerCase();
  const batchSize = options.batchSize ?? BATCH_SIZE;
  return db().transaction(
    async (tx) => {
      const [head] = await tx
        .select({ sequence: auditChainHeads.sequence, hash: auditChainHeads.hash })
        .from(auditChainHeads)
        .where(eq(auditChainHeads.organizationId, id));
      const headSequence = head?.sequence ?? 0;
      const headHash = head?.hash ?? GENESIS_HASH;
      const answer = (checkedEvents: number, firstInvalidSequence: number | null): ChainVerification => ({
        valid: firstInvalidSequence === null,
        checkedEvents,
        headSequence,
        headHash,
        firstInvalidSequence,
      });

      let previous = { sequence: 0, hash: GENESIS_HASH };
      let checked = 0;
      for (;;) {
        const batch = await eventsAfter(tx, id, previous.sequence, batchSize);
        for (const event of batch) {
          checked += 1;
          const expected = previous.sequence + 1;
          if (event.sequence !== expected || event.prevHash !== previous.hash || eventHash(event) !== event.hash)
            return answer(checked, expected);
          previous = { sequence: event.sequence, hash: event.hash };
        }
        if (batch.length < batchSize) break;
      }
      // The events hold together; the head says where they must end.
      if (previous.sequence < headSequence) return answer(checked, previous.sequence + 1);
      if (previous.sequence > headSequence) return answer(checked, headSequence + 1);
      if (previous.hash !== headHash) return answer(checked, Math.max(headSequence, 1));
      return answer(checked, null);
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
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

/** Every organization with an audit trail (a chain head or events), in id order: what the CLI verifies. */
export async function organizationsWithAuditEvents(): Promise<string[]> {
  const rows = await db()
    .select({ organizationId: auditChainHeads.organizationId })
    .from(auditChainHeads)
    .union(db().selectDistinct({ organizationId: auditEvents.organizationId }).from(auditEvents));
  return rows.map((row) => row.organizationId).sort();
}
