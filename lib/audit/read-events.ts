import { and, desc, eq, gt, inArray, sql } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db } from '../db/client';
import { auditReadCounts } from '../db/schema/audit';
import { transaction } from '../db/transaction';
import type { AuditAction } from './actions';
import { recordAudit, writingAuditTrail } from './record';
import { currentAuditScope } from './scope';
import { canonicalJson, sealWorkProduct, sha256Hex } from './work-product';

/**
 * How long after a chained read the same read is only counted on it: an hour. Reading cannot grow
 * the trail (nor a case's custody) by more than one event per user, thing read and hour.
 */
export const READ_WINDOW_SECONDS = 60 * 60;

/** One read of case evidence, as the endpoint states it (lib/http/endpoint.ts). */
export interface EvidenceRead {
  action: AuditAction;
  organizationId: string;
  caseId: string | null;
  /** The validated path and query of the request. */
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  /** The reader is opposing counsel on the case: their query is their work product. */
  opposingCounsel: boolean;
}

/**
 * What the event of a read stores: the path (what was read) and the query. Opposing counsel's
 * query is never stored as text: its parameter names, sorted, and the SHA-256 (hex) of its RFC 8785
 * canonical JSON, which proves a query they later present was the one run.
 */
export function readMetadata(read: Pick<EvidenceRead, 'path' | 'query' | 'opposingCounsel'>): Record<string, unknown> {
  if (!read.opposingCounsel) return { path: read.path, query: read.query };
  const sealed = sealWorkProduct(read.query);
  return { path: read.path, queryKeys: sealed.keys, querySha256: sealed.sha256 };
}

/**
 * Records a read of case evidence. The same read (action, case, acting user or token, and what
 * the event stores of path and query) within READ_WINDOW_SECONDS of the last chained one is
 * counted on that event (audit_read_counts, beside the chain) instead of chaining a new event:
 * one statement. Otherwise a new event is chained with its count row, in one transaction. Two
 * first reads at the same moment may both chain an event: the trail then shows both.
 */
export async function recordEvidenceRead(read: EvidenceRead): Promise<void> {
  // The benchmark without the trail measures reads without their counting too.
  if (!writingAuditTrail()) return;
  const scope = currentAuditScope();
  const metadata = readMetadata(read);
  const readKey = sha256Hex(
    canonicalJson({
      action: read.action,
      organizationId: read.organizationId,
      caseId: read.caseId,
      actorType: scope.actor.type,
      // The same user through another session is the same reader; without a user, the token.
      actor: scope.actor.userId ?? scope.actor.tokenId,
      metadata,
    }),
  );
  const at = now();
  const open = db()
    .select({ eventId: auditReadCounts.eventId })
    .from(auditReadCounts)
    .where(
      and(eq(auditReadCounts.readKey, readKey), gt(auditReadCounts.firstReadAt, addSeconds(at, -READ_WINDOW_SECONDS))),
    )
    .orderBy(desc(auditReadCounts.firstReadAt))
    .limit(1);
  const counted = await db()
    .update(auditReadCounts)
    .set({ count: sql`${auditReadCounts.count} + 1`, lastReadAt: at })
    .where(inArray(auditReadCounts.eventId, open))
    .returning({ eventId: auditReadCounts.eventId });
  if (counted.length > 0) return;

  await transaction(async (tx) => {
    const eventId = recordAudit(tx, {
      action: read.action,
      organizationId: read.organizationId,
      caseId: read.caseId,
      metadata,
    });
    if (eventId === null) throw new Error('A read event was not recorded');
    await tx.insert(auditReadCounts).values({
      eventId,
      organizationId: read.organizationId,
      readKey,
      firstReadAt: at,
      lastReadAt: at,
      count: 1,
    });
  });
}
