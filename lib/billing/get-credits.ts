import { count, desc, eq } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { CreditsQuery } from '../../schemas/billing/billing';
import { config } from '../config';
import { db } from '../db/client';
import { creditLedger } from '../db/schema/billing';
import { organizations } from '../db/schema/organizations';
import type { OrganizationContext } from '../organizations/context';
import { staffCreditDescription } from './admin';
import { CreditsOffError } from './errors';

/** GET /billing/credits: balance, currency, deduct percentage and the ledger newest first. */
export async function getCredits(ctx: { organization: OrganizationContext }, query: z.output<typeof CreditsQuery>) {
  const organizationId = ctx.organization.id;
  if (!config().FEATURE_CREDITS) throw new CreditsOffError();
  const limit = query.limit ?? 50;
  const skip = query.skip ?? 0;
  // One snapshot: a charge committing between the reads must not show a balance the ledger
  // does not add up to.
  const { organization, ledger, totals } = await db().transaction(
    async (tx) => {
      const [organization] = await tx.select().from(organizations).where(eq(organizations.id, organizationId));
      const ledger = await tx
        .select()
        .from(creditLedger)
        .where(eq(creditLedger.organizationId, organizationId))
        .orderBy(desc(creditLedger.createdAt), desc(creditLedger.id))
        .limit(limit)
        .offset(skip);
      const [totals] = await tx
        .select({ total: count() })
        .from(creditLedger)
        .where(eq(creditLedger.organizationId, organizationId));
      return { organization: organization!, ledger, totals };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
  return {
    balanceCents: organization.creditBalanceCents,
    currency: 'usd',
    effectiveDeductPercentage: organization.creditBalanceCents > 0 ? organization.creditDeductPercentage : 0,
    ledger: ledger.map((entry) => ({
      id: entry.id,
      amountCents: entry.amountCents,
      balanceAfterCents: entry.balanceAfterCents,
      kind: entry.kind,
      // Staff grants say what happened, never why (the reason stays in the hidden history field).
      description: entry.kind === 'grant' ? staffCreditDescription(entry.amountCents) : entry.description,
      billingRowId: entry.billingRowId,
      createdAt: entry.createdAt.toISOString(),
    })),
    total: totals?.total ?? 0,
    limit,
    skip,
  };
}
