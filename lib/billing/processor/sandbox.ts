import { createHash, randomBytes } from 'node:crypto';
import { and, eq, inArray } from 'drizzle-orm';
import { selfLink } from '../../config';
import { db } from '../../db/client';
import { sandboxCheckoutSessions, sandboxCustomers, sandboxInvoices } from '../../db/schema/billing';
import type { CustomerInput, InvoiceLine, InvoiceResult, PaymentProcessor } from '.';

/** A card number ending in this is declined, like Stripe's test card 4000 0000 0000 0002. */
export const SANDBOX_DECLINED_LAST4 = '0002';

const sandboxId = (prefix: string) => `${prefix}_sandbox_${randomBytes(10).toString('hex')}`;

/**
 * Offline processor: customers, checkout sessions and invoices are rows in Postgres, with ids
 * shaped like Stripe's. Invoices settle at once against the saved card; a card ending 0002 is
 * declined. The local server serves the checkout page (`/_sandbox/checkout/{id}`).
 */
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox' as const;

  async createCustomer(input: CustomerInput): Promise<string> {
    const id = `cus_sandbox_${input.organizationId.replaceAll('-', '')}`;
    await db()
      .insert(sandboxCustomers)
      .values({ id, name: input.name, email: input.email, organizationId: input.organizationId })
      .onConflictDoNothing();
    return id;
  }

  async createSetupSession(input: {
    customerId: string;
    successUrl: string;
    cancelUrl: string;
    idempotencyKey: string;
  }) {
    // Like the Stripe processor: the return URLs are part of the key, so a repeat with the same URLs
    // reuses the session and other URLs get their own (never a session returning somewhere else).
    const urls = createHash('sha256').update(`${input.successUrl}\n${input.cancelUrl}`).digest('hex').slice(0, 16);
    const idempotencyKey = `${input.idempotencyKey}:${urls}`;
    const [created] = await db()
      .insert(sandboxCheckoutSessions)
      .values({
        id: sandboxId('cs'),
        customerId: input.customerId,
        successUrl: input.successUrl,
        cancelUrl: input.cancelUrl,
        status: 'open',
        idempotencyKey,
      })
      .onConflictDoNothing()
      .returning();
    const session =
      created ??
      (
        await db()
          .select()
          .from(sandboxCheckoutSessions)
          .where(eq(sandboxCheckoutSessions.idempotencyKey, idempotencyKey))
      )[0]!;
    return { id: session.id, url: selfLink(`/_sandbox/checkout/${session.id}`).toString() };
  }

  async chargeInvoice(input: {
    customerId: string;
    lines: InvoiceLine[];
    idempotencyKey: string;
  }): Promise<InvoiceResult> {
    const amountCents = input.lines.reduce((sum, line) => sum + line.amountCents, 0);
    const [created] = await db()
      .insert(sandboxInvoices)
      .values({
        id: sandboxId('in'),
        customerId: input.customerId,
        amountCents,
        status: 'open',
        lines: input.lines,
        idempotencyKey: input.idempotencyKey,
      })
      .onConflictDoNothing()
      .returning();
    const invoice =
      created ??
      (await db().select().from(sandboxInvoices).where(eq(sandboxInvoices.idempotencyKey, input.idempotencyKey)))[0]!;
    if (invoice.status !== 'open') return this.result(invoice.id, invoice.status === 'paid' ? 'paid' : 'failed');
    return this.collect(invoice.id, input.customerId);
  }

  async payInvoice(invoiceId: string): Promise<InvoiceResult> {
    const [invoice] = await db().select().from(sandboxInvoices).where(eq(sandboxInvoices.id, invoiceId));
    if (!invoice) throw new Error(`No sandbox invoice ${invoiceId}`);
    if (invoice.status === 'paid') return this.result(invoice.id, 'paid');
    if (invoice.status === 'void') throw new Error(`Sandbox invoice ${invoiceId} is void and cannot be paid`);
    return this.collect(invoice.id, invoice.customerId);
  }

  async voidInvoice(invoiceId: string): Promise<'void' | 'paid'> {
    const [voided] = await db()
      .update(sandboxInvoices)
      .set({ status: 'void' })
      .where(and(eq(sandboxInvoices.id, invoiceId), inArray(sandboxInvoices.status, ['open', 'uncollectible', 'void'])))
      .returning({ id: sandboxInvoices.id });
    if (voided) return 'void';
    const [invoice] = await db()
      .select({ status: sandboxInvoices.status })
      .from(sandboxInvoices)
      .where(eq(sandboxInvoices.id, invoiceId));
    if (invoice?.status === 'paid') return 'paid';
    throw new Error(`No sandbox invoice ${invoiceId}`);
  }

  /** Collects with the saved card: paid, declined (stays open, reported failed), or open without a card. */
  private async collect(invoiceId: string, customerId: string): Promise<InvoiceResult> {
    const [customer] = await db().select().from(sandboxCustomers).where(eq(sandboxCustomers.id, customerId));
    if (!customer?.defaultPaymentMethod) return this.result(invoiceId, 'open');
    if (customer.cardLast4 === SANDBOX_DECLINED_LAST4) return this.result(invoiceId, 'failed');
    // Only an open invoice is collected: one voided meanwhile stays void and is reported failed.
    const [paid] = await db()
      .update(sandboxInvoices)
      .set({ status: 'paid' })
      .where(and(eq(sandboxInvoices.id, invoiceId), eq(sandboxInvoices.status, 'open')))
      .returning({ id: sandboxInvoices.id });
    return this.result(invoiceId, paid ? 'paid' : 'failed');
  }

  private result(invoiceId: string, status: InvoiceResult['status']): InvoiceResult {
    return { invoiceId, hostedInvoiceUrl: selfLink(`/_sandbox/invoices/${invoiceId}`).toString(), status };
  }

  /** The sandbox's checkout page was submitted with a card: saves it on the customer. */
  async completeSetupSession(
    sessionId: string,
    cardNumber: string,
  ): Promise<{ customerId: string; paymentMethodId: string; last4: string } | null> {
    const [session] = await db()
      .select()
      .from(sandboxCheckoutSessions)
      .where(eq(sandboxCheckoutSessions.id, sessionId));
    if (session?.status !== 'open') return null;
    const last4 = cardNumber.replace(/\D/g, '').slice(-4);
    const paymentMethodId = sandboxId('pm');
    await db()
      .update(sandboxCustomers)
      .set({ defaultPaymentMethod: paymentMethodId, cardLast4: last4 })
      .where(eq(sandboxCustomers.id, session.customerId));
    await db()
      .update(sandboxCheckoutSessions)
      .set({ status: 'complete' })
      .where(eq(sandboxCheckoutSessions.id, sessionId));
    return { customerId: session.customerId, paymentMethodId, last4 };
  }
}

/** A sandbox invoice, for the local server's hosted invoice page (`/_sandbox/invoices/{id}`). */
export async function sandboxInvoice(invoiceId: string) {
  const [invoice] = await db().select().from(sandboxInvoices).where(eq(sandboxInvoices.id, invoiceId));
  return invoice ?? null;
}
