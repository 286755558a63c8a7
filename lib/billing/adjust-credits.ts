import { eq } from 'drizzle-orm';
import type { Executor, Tx } from '../db/client';
import { creditLedger } from '../db/schema/billing';
import { organizations } from '../db/schema/organizations';
import { setCreditBalance } from '../organizations/billing-account';

/**
 * Changes the credit balance and writes the ledger entry in the same transaction. The caller
 * holds the row lock (or passes the balance it read under it); the database refuses a negative balance.
 */
export async function adjustCredits(
  tx: Executor,
  organizationId: string,
  amountCents: number,
  kind: (typeof creditLedger.$inferInsert)['kind'],
  description: string,
  billingRowId: string | null,
  lockedBalance?: number,
  idempotencyKey?: string,
): Promise<number> {
  let balance = lockedBalance;
  if (balance === undefined) {
    const [row] = await tx
      .select({ balance: organizations.creditBalanceCents })
      .from(organizations)
      .where(eq(organizations.id, organizationId))
      .for('no key update');
    balance = row!.balance;
  }
  const after = balance + amountCents;
  await setCreditBalance(tx, organizationId, after);
  await tx.insert(creditLedger).values({
    organizationId,
    amountCents,
    balanceAfterCents: after,
    kind,
    description,
    billingRowId,
    idempotencyKey: idempotencyKey ?? null,
  });
  return after;
}

/**
 * Money received on an invoice whose charge was voided is credited to the organization, once per
 * invoice (the ledger entry's idempotency key), so it is never lost nor credited twice. Returns
 * what this call credited (0 when it was already).
 */
export async function keepPaymentAsCredit(
  tx: Tx,
  organizationId: string,
  invoiceId: string,
  amountCents: number,
): Promise<number> {
  if (amountCents <= 0) return 0;
  const idempotencyKey = `voided-charge-payment:${invoiceId}`;
  const [account] = await tx
    .select({ balance: organizations.creditBalanceCents })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .for('no key update');
  const [already] = await tx
    .select({ id: creditLedger.id })
    .from(creditLedger)
    .where(eq(creditLedger.idempotencyKey, idempotencyKey));
  if (!account || already) return 0;
  await adjustCredits(
    tx,
    organizationId,
    amountCents,
    'refund',
    `Payment of voided invoice ${invoiceId} kept as credit`,
    null,
    account.balance,
    idempotencyKey,
  );
  return amountCents;
}
