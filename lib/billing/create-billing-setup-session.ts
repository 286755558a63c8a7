import type * as z from 'zod/mini';
import type { CreateBillingSetupSessionDto } from '../../schemas/billing/billing';
import { recordAudit } from '../audit/record';
import { transaction } from '../db/transaction';
import type { OrganizationContext } from '../organizations/context';
import { loadOrganization } from '../organizations/load';
import { assertCaseBilling } from './case-billing';
import { createSetupSession } from './setup-sessions';

/**
 * POST /billing/setup-session: a processor checkout in setup mode (card on file, no charge). The
 * session lives at the processor, so its audit event commits in a transaction of its own once the
 * link exists (a link the processor refused to make records nothing).
 */
export async function createBillingSetupSession(
  ctx: { organization: OrganizationContext },
  input: z.output<typeof CreateBillingSetupSessionDto>,
) {
  const organization = await loadOrganization(ctx.organization.id);
  assertCaseBilling(organization);
  const session = await createSetupSession(organization, input);
  await transaction(async (tx) =>
    recordAudit(tx, {
      action: 'billing.setup_session.created',
      organizationId: organization.id,
      target: { type: 'setup_session', id: session.id },
      metadata: { successUrl: input.successUrl, cancelUrl: input.cancelUrl },
    }),
  );
  return { url: session.url };
}
