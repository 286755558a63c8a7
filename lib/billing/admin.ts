import { eq } from 'drizzle-orm';
import { db } from '../db/client';
import { organizations } from '../db/schema';
import { transaction } from '../db/transaction';
import { adjustCredits } from './charges';
import { recordBillingHistory } from './history';

/**
 * Operator staff grant (or, with a negative amount, take back) prepaid credits. The ledger entry
 * and the balance change in one transaction; the history entry is marked as made by staff.
 */
export async function grantCredits(organizationId: string, amountCents: number, reason: string): Promise<number | null> {
  const [organization] = await db().select({ id: organizations.id }).from(organizations).where(eq(organizations.id, organizationId));
  if (!organization) return null;
  return transaction(async (tx) => {
    const [locked] = await tx.select({ balance: organizations.creditBalanceCents }).from(organizations).where(eq(organizations.id, organizationId)).for('update');
    if (locked!.balance + amountCents < 0) throw new Error(`The balance is ${locked!.balance} cents; it cannot go below zero`);
    const balance = await adjustCredits(tx, organizationId, amountCents, 'grant', reason, null, locked!.balance);
    await recordBillingHistory(tx, { organizationId, category: 'admin', description: `Credits ${amountCents >= 0 ? 'granted' : 'removed'}: ${amountCents} cents`, reason, byStaff: true });
    return balance;
  });
}
