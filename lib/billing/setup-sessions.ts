import { now } from '../clock';
import type { organizations } from '../db/schema/organizations';
import { NoProcessorCustomerError } from './errors';
import { paymentProcessor } from './processor';

/** The processor's card set-up session for the organization (409 while it has no processor customer). */
export async function createSetupSession(
  organization: typeof organizations.$inferSelect,
  input: { successUrl: string; cancelUrl: string },
): Promise<{ id: string; url: string }> {
  // First the processor: without payments configured the answer is 503 PAYMENTS_NOT_CONFIGURED,
  // not a 409 for the customer that cannot be created until they are.
  const processor = await paymentProcessor();
  if (!organization.processorCustomerId) throw new NoProcessorCustomerError();
  return processor.createSetupSession({
    customerId: organization.processorCustomerId,
    successUrl: input.successUrl,
    cancelUrl: input.cancelUrl,
    // One session per organization and minute: a double click reuses it, a later visit gets a fresh one.
    idempotencyKey: `setup-session:${organization.id}:${Math.floor(now().getTime() / 60_000)}`,
  });
}
