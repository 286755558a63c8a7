import { eq } from 'drizzle-orm';
import { recordAudit } from '../audit/record';
import { db } from '../db/client';
import { organizations } from '../db/schema/organizations';
import { transaction } from '../db/transaction';
import { idEquals } from '../ids';
import { adjustCredits } from './adjust-credits';
import { recordBillingHistory } from './history';

/** What the customer's credit ledger (GET /billing/credits) says of a staff grant: never the reason. */
export const staffCreditDescription = (amountCents: number): string =>
  amountCents >= 0 ? 'Credits added by support' : 'Credits removed by support';

/**
 * Operator staff grant (or, with a negative amount, take back) prepaid credits. The ledger entry
 * and the balance change in one transaction; the history entry is marked as made by staff. The
 * customer reads the ledger, so its entry has a neutral description; the reason is kept only on
 * the history entry, whose staff entries customers see neutralized. The audit event (its actor is
 * the scope's: staff from the admin CLI) says how much, never why, for the same reason.
 */
export async function grantCredits(
  organizationIdTyped: string,
  amountCents: number,
  reason: string,
): Promise<number | null> {
  // Typed by an operator: an id that is not a UUID names no organization (null), like an unknown one.
  const [organization] = await db()
    .select({ id: organizations.id })
    .from(organizations)
    .where(idEquals(organizations.id, organizationIdTyped));
  if (!organization) return null;
  const organizationId = organization.id;
  return transaction(async (tx) => {
    const [locked] = await tx
      .select({ balance: organizations.creditBalanceCents })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .for('no key update');
    if (locked!.balance + amountCents < 0)
      throw new Error(`The balance is ${locked!.balance} cents; it cannot go below zero`);
    const balance = await adjustCredits(
      tx,
      organizationId,
      amountCents,
      'grant',
      staffCreditDescription(amountCents),
      null,
      locked!.balance,
    );
    await recordBillingHistory(tx, {
      organizationId,
      category: 'admin',
      description: `Credits ${amountCents >= 0 ? 'granted' : 'removed'}: ${amountCents} cents`,
      reason,
      byStaff: true,
    });
    recordAudit(tx, {
      action: 'billing.credits.granted',
      organizationId,
      target: { type: 'organization', id: organizationId },
      metadata: { amountCents, balanceAfterCents: balance },
    });
    return balance;
  });
}
