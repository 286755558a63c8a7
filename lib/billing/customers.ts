import { eq, isNull } from 'drizzle-orm';
import { db } from '../db/client';
import { organizations } from '../db/schema/organizations';
import { logger } from '../log';
import { setProcessorCustomerId } from '../organizations/billing-account';
import { paymentProcessor, paymentsConfigured } from './processor';

/**
 * Creates the organization's customer at the payment processor if it has none yet. Runs after
 * the organization is committed; when the processor is down the organization simply has no
 * customer yet (billing setup answers 409) and the maintenance job tries again.
 */
export async function ensureProcessorCustomer(organizationId: string): Promise<string | null> {
  const [organization] = await db().select().from(organizations).where(eq(organizations.id, organizationId)).limit(1);
  if (!organization) return null;
  if (organization.processorCustomerId) return organization.processorCustomerId;
  const processor = await paymentProcessor();
  const customerId = await processor.createCustomer({
    organizationId,
    name: organization.name,
    email: organization.email,
  });
  await setProcessorCustomerId(db(), organizationId, customerId);
  return customerId;
}

/**
 * Maintenance: retries customer creation for organizations that still have none (registration
 * leaves it here while payments are not configured). Nothing to do until they are.
 */
export async function createMissingProcessorCustomers(limit = 50): Promise<number> {
  if (!(await paymentsConfigured())) return 0;
  const missing = await db()
    .select({ id: organizations.id })
    .from(organizations)
    .where(isNull(organizations.processorCustomerId))
    .limit(limit);
  let created = 0;
  for (const { id } of missing) {
    try {
      if (await ensureProcessorCustomer(id)) created += 1;
    } catch (error) {
      logger.warn('processor customer creation failed', { organizationId: id, error });
    }
  }
  return created;
}
