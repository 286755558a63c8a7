import { eq } from 'drizzle-orm';
import { db, type Tx } from '../db/client';
import { organizations } from '../db/schema/organizations';
import { type AfterCommit, transaction } from '../db/transaction';
import { setPaymentMethod } from '../organizations/billing-account';
import { collectOpenInvoices } from './collect-open-invoices';
import { type ProcessorReport, recordProcessorEvent } from './processor-events';
import { recordBillingHistory } from './history';

/**
 * A card was saved for a processor customer (checkout completed, payment method attached, or the
 * sandbox checkout page): the organization has a card on file, and its open invoices are
 * collected after commit. Repeating it changes nothing more. `report` (what the processor told
 * us) is the audit event of the change. Returns whether anything changed.
 */
export async function recordPaymentMethod(
  tx: Tx,
  afterCommit: AfterCommit,
  customerId: string,
  last4: string | null,
  report: ProcessorReport,
): Promise<boolean> {
  const [organization] = await tx
    .select()
    .from(organizations)
    .where(eq(organizations.processorCustomerId, customerId))
    .for('no key update');
  if (!organization) return false;
  if (organization.hasPaymentMethod && (last4 === null || organization.paymentMethodLast4 === last4)) return false;
  await setPaymentMethod(tx, organization.id, last4 ?? organization.paymentMethodLast4);
  await recordBillingHistory(tx, {
    organizationId: organization.id,
    category: 'payment_method',
    description: last4 ? `Card ending ${last4} saved for payments` : 'Card saved for payments',
  });
  recordProcessorEvent(
    tx,
    organization.id,
    report,
    { type: 'processor_customer', id: customerId },
    { cardLast4: last4 ?? organization.paymentMethodLast4 },
  );
  afterCommit(() => collectOpenInvoices(organization.id));
  return true;
}

/** The sandbox checkout page was submitted: save the card like Stripe's checkout would. */
export async function completeSandboxCheckout(
  sessionId: string,
  cardNumber: string,
): Promise<{ successUrl: string } | null> {
  const { SandboxProcessor } = await import('#local-only/sandbox-processor');
  const processor = new SandboxProcessor();
  const completed = await processor.completeSetupSession(sessionId, cardNumber);
  if (!completed) return null;
  // The sandbox's stand-in for Stripe's checkout.session.completed event, which has an id there.
  await transaction((tx, afterCommit) =>
    recordPaymentMethod(tx, afterCommit, completed.customerId, completed.last4, {
      type: 'checkout.session.completed',
      processorEventId: null,
    }),
  );
  const { sandboxCheckoutSessions } = await import('../db/schema');
  const [session] = await db().select().from(sandboxCheckoutSessions).where(eq(sandboxCheckoutSessions.id, sessionId));
  return { successUrl: session!.successUrl };
}
