import { and, desc, eq, type SQL, sql } from 'drizzle-orm';
import { db, type Executor } from '../db/client';
import { billingHistory } from '../db/schema/billing';
import { users } from '../db/schema/users';
import type * as z from 'zod/mini';
import type { BillingHistoryQuery } from '../../schemas/billing/billing';
import { idEquals } from '../ids';
import type { BillingHistoryCategory } from './history-categories';
import type { OrganizationContext } from '../organizations/context';

type Category = BillingHistoryCategory;

/** Writes an audit entry for a billing change (in the caller's transaction). */
export async function recordBillingHistory(
  executor: Executor,
  entry: {
    organizationId: string;
    category: Category;
    description: string;
    caseId?: string | null;
    reason?: string | null;
    createdById?: string | null;
    byStaff?: boolean;
    metadata?: Record<string, unknown>;
  },
): Promise<void> {
  await executor.insert(billingHistory).values({
    organizationId: entry.organizationId,
    category: entry.category,
    description: entry.description,
    caseId: entry.caseId ?? null,
    reason: entry.reason ?? null,
    createdById: entry.createdById ?? null,
    byStaff: entry.byStaff ?? false,
    metadata: entry.metadata ?? {},
  });
}

/** Neutral wording for entries made by operator staff (no reason, no creator). */
export const STAFF_DESCRIPTION = 'Billing adjusted by support';

/** GET /billing/history: newest first, by category and case; staff entries are neutralized. */
export async function listBillingHistory(
  ctx: { organization: OrganizationContext },
  query: z.output<typeof BillingHistoryQuery>,
) {
  const organizationId = ctx.organization.id;
  const filters: SQL[] = [eq(billingHistory.organizationId, organizationId)];
  if (query.category) filters.push(eq(billingHistory.category, query.category));
  if (query.caseId) filters.push(idEquals(billingHistory.caseId, query.caseId));
  const rows = await db()
    .select({ entry: billingHistory, createdBy: { id: users.id, name: users.name, email: users.email } })
    .from(billingHistory)
    .leftJoin(users, eq(users.id, billingHistory.createdById))
    .where(and(...filters))
    .orderBy(desc(billingHistory.createdAt), desc(sql`${billingHistory.id}`))
    .limit(query.limit ?? 50)
    .offset(query.skip ?? 0);
  return rows.map(({ entry, createdBy }) => {
    const base = {
      id: entry.id,
      category: entry.category,
      caseId: entry.caseId,
      createdAt: entry.createdAt.toISOString(),
    };
    if (entry.byStaff) return { ...base, description: STAFF_DESCRIPTION, reason: null };
    return {
      ...base,
      description: entry.description,
      reason: entry.reason,
      createdBy: createdBy?.id ? createdBy : null,
    };
  });
}
