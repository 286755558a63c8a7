import { randomBytes } from 'node:crypto';
import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { db } from '../../lib/db/client';
import { auditEvents } from '../../lib/db/schema';
import type { RouteDefinition } from '../../lib/http/route';
import { invoke, type InvokeOptions, type InvokeResult } from './invoke';

export type AuditRow = typeof auditEvents.$inferSelect;

/** Changes audit rows as someone with the table's ownership could: the append-only trigger off, then on again. */
export async function forgeAuditRows(change: () => Promise<unknown>): Promise<void> {
  await db().execute(sql`alter table audit_events disable trigger audit_events_no_change`);
  try {
    await change();
  } finally {
    await db().execute(sql`alter table audit_events enable trigger audit_events_no_change`);
  }
}

/** A request id of its own (sent as `x-request-id`), to find what one request wrote to the audit trail. */
export const newRequestId = (prefix = 'audit') => `${prefix}-${randomBytes(8).toString('hex')}`;

/**
 * What one request wrote to the audit trail, found by the `x-request-id` it sent (kept as the
 * event's `clientRequestId`; the chain's `requestId` is the service's own), in chain order per
 * organization.
 */
export const auditEventsOfRequest = (requestId: string): Promise<AuditRow[]> =>
  db()
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.clientRequestId, requestId))
    .orderBy(asc(auditEvents.organizationId), asc(auditEvents.sequence));

/** An organization's events of one action, in chain order. */
export const auditEventsOf = (organizationId: string, action: string): Promise<AuditRow[]> =>
  db()
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.organizationId, organizationId), eq(auditEvents.action, action)))
    .orderBy(asc(auditEvents.sequence));

/** An organization's whole chain in order, or only the events after `afterSequence`. */
export const auditChainOf = (organizationId: string, afterSequence?: number): Promise<AuditRow[]> =>
  db()
    .select()
    .from(auditEvents)
    .where(
      afterSequence === undefined
        ? eq(auditEvents.organizationId, organizationId)
        : and(eq(auditEvents.organizationId, organizationId), gt(auditEvents.sequence, afterSequence)),
    )
    .orderBy(asc(auditEvents.sequence));

/** Invokes `route` with a request id of its own; answers the result and what the request wrote to the audit trail. */
export async function invokeAudited(
  route: RouteDefinition,
  options: InvokeOptions = {},
): Promise<{ result: InvokeResult; requestId: string; events: AuditRow[] }> {
  const requestId = newRequestId(route.operationId);
  const result = await invoke(route, { ...options, headers: { ...options.headers, 'x-request-id': requestId } });
  return { result, requestId, events: await auditEventsOfRequest(requestId) };
}
