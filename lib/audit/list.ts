import { and, eq, gte, lte, type SQL, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { AuditEventsQuery } from '../../schemas/audit/audit-events';
import { db } from '../db/client';
import type { CaseAccess } from '../cases/rules';
import { auditEvents, auditReadCounts } from '../db/schema/audit';
import { caseAccess } from '../db/schema/cases';
import { InvalidInputError } from '../errors';
import { idEquals } from '../ids';
import type { OrganizationContext } from '../organizations/context';
import { pageWindow, sortDirection, toPage } from '../paging';

type AuditEventRow = typeof auditEvents.$inferSelect;

/**
 * The case access that shows a case's events in full in the organization's trail: the firm's side
 * of the case. Opposing counsel and members without access see that an event happened, not what
 * it names (their reads and the firm's are each side's work product).
 */
const SEES_CASE_EVENT_DETAIL: readonly CaseAccess[] = ['owner', 'admin', 'viewer'];

/**
 * A case's event as shown to a reader of the trail who may not read the case: what happened, when,
 * by whom and its place in the chain stay; what names things (the target, the metadata with case
 * and file names, search text), the client's request id and where from (IP, user agent) go.
 */
function withheld(entity: ReturnType<typeof auditEventEntity>) {
  return { ...entity, target: null, ip: null, userAgent: null, clientRequestId: null, metadata: null, redacted: true };
}

/**
 * An event as the API shows it: who acted grouped as `actor`, what it acted on as `target`, and
 * `count`: how many times the same read happened within its window (audit_read_counts), 1 for
 * every other event.
 */
export function auditEventEntity(row: AuditEventRow, count: number | null = null) {
  return {
    id: row.id,
    sequence: row.sequence,
    occurredAt: row.occurredAt.toISOString(),
    action: row.action,
    actor: { type: row.actorType, userId: row.actorUserId, tokenId: row.tokenId },
    caseId: row.caseId,
    target: row.targetType !== null && row.targetId !== null ? { type: row.targetType, id: row.targetId } : null,
    ip: row.ip,
    userAgent: row.userAgent,
    requestId: row.requestId,
    clientRequestId: row.clientRequestId,
    metadata: row.metadata as Record<string, unknown> | null,
    redacted: false,
    count: count ?? 1,
    prevHash: row.prevHash,
    hash: row.hash,
  };
}

/**
 * The organization's audit trail, newest first (`sortOrder=asc` for oldest first), 50 per page by
 * default. `action` matches by prefix (`organization.member` finds `organization.member.invited`),
 * `from`/`to` bound `occurredAt` inclusively. An event of a case the caller has no firm-side access
 * to is shown withheld. Two queries: the page (with the caller's access to each event's case) and
 * the count.
 */
export async function listAuditEvents(
  { organization, userId }: { organization: Pick<OrganizationContext, 'id'>; userId: string },
  query: z.output<typeof AuditEventsQuery>,
) {
  const from = query.from ? new Date(query.from) : undefined;
  const to = query.to ? new Date(query.to) : undefined;
  if (from && to && from > to) throw new InvalidInputError([{ field: 'from', message: 'from is after to' }]);
  const window = pageWindow(query, 50);
  const filters: Array<SQL | undefined> = [
    eq(auditEvents.organizationId, organization.id),
    // starts_with compares text as is: no LIKE pattern, so `_` and `%` in a prefix are never wildcards.
    query.action !== undefined ? sql`starts_with(${auditEvents.action}, ${query.action})` : undefined,
    query.actorId !== undefined ? idEquals(auditEvents.actorUserId, query.actorId) : undefined,
    query.caseId !== undefined ? idEquals(auditEvents.caseId, query.caseId) : undefined,
    from ? gte(auditEvents.occurredAt, from) : undefined,
    to ? lte(auditEvents.occurredAt, to) : undefined,
  ];
  const where = and(...filters);
  const [[totals], rows] = await Promise.all([
    db().select({ total: sql<number>`count(*)::int` }).from(auditEvents).where(where),
    db()
      .select({ event: auditEvents, access: caseAccess.access, count: auditReadCounts.count })
      .from(auditEvents)
      .leftJoin(caseAccess, and(eq(caseAccess.caseId, auditEvents.caseId), eq(caseAccess.userId, userId)))
      .leftJoin(auditReadCounts, eq(auditReadCounts.eventId, auditEvents.id))
      .where(where)
      .orderBy(sortDirection(query.sortOrder, 'desc')(auditEvents.sequence))
      .limit(window.size)
      .offset(window.offset),
  ]);
  const shown = rows.map(({ event, access, count }) =>
    event.caseId !== null && !(access !== null && SEES_CASE_EVENT_DETAIL.includes(access as CaseAccess))
      ? withheld(auditEventEntity(event, count))
      : auditEventEntity(event, count),
  );
  return toPage(window, totals!.total, shown);
}
