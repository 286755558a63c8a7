import { db } from '../../db/client';
import { sandboxCustomers } from '../../db/schema';
import type { CustomerInput, PaymentProcessor } from '.';

/** Offline processor: customers are rows in Postgres, ids look like Stripe's (`cus_sandbox_...`). */
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
}
