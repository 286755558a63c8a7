import { recordAudit } from '../audit/record';
import type { Actor } from '../auth/actor';
import type { CaseContext } from '../cases/context';
import { isProNow, makeCaseProThroughPlan } from '../cases/pro-status';
import type { Tx } from '../db/client';
import { billingRows } from '../db/schema/billing';
import { transaction } from '../db/transaction';
import type { OrganizationContext } from '../organizations/context';
import { loadOrganization } from '../organizations/load';
import { BILLING_ROW_STATUS } from './billing-row-lifecycle';
import { assertCaseBilling } from './case-billing';
import { enforcedStandingOf } from './enforced-plan';
import { CaseAlreadyProError, DelinquentError } from './errors';
import { recordBillingHistory } from './history';
import { recordCharge } from './record-charge';
import { isDelinquent } from './summary';
import { PRO_UPGRADE_SKU } from './tiers';

/**
 * POST /cases/{caseId}/pro-upgrade: records the one-time charge (once per case, whatever the
 * number of concurrent requests: the charge key is unique) and answers `processing`; the case
 * turns Pro when the invoice is paid, or at once when the tier includes Pro. The request that
 * creates the charge records its audit event; a concurrent repeat that finds it records none.
 */
export async function upgradeCaseToPro(ctx: {
  actor: Actor;
  organization: OrganizationContext;
  caseContext: CaseContext;
}) {
  const { actor } = ctx;
  const organizationId = ctx.organization.id;
  const organization = await loadOrganization(organizationId);
  assertCaseBilling(organization);
  // The case-context middleware resolved the case and checked the billing rule.
  const target = ctx.caseContext.case;
  const caseId = target.id;
  if (isProNow(target)) throw new CaseAlreadyProError();
  if (isDelinquent(organization)) {
    throw new DelinquentError();
  }
  // Pro through the plan: a Pro-including tier, paid or within its days to pay (then Pro ends with them).
  const plan = enforcedStandingOf(organization);

  // The plan's row and a paid upgrade have keys of their own: a case that leaves the plan can still be charged.
  const chargeKey = plan.includesPro ? `case-pro-plan:${caseId}` : `case-pro-upgrade:${caseId}`;
  const audit = (tx: Tx, metadata: Record<string, unknown>) =>
    recordAudit(tx, {
      action: 'case.pro_upgrade.requested',
      organizationId,
      caseId,
      target: { type: 'case', id: caseId },
      metadata: { chargeKey, ...metadata },
    });

  await transaction(async (tx, afterCommit) => {
    if (plan.includesPro) {
      const [row] = await tx
        .insert(billingRows)
        .values({
          organizationId,
          caseId,
          skuKey: PRO_UPGRADE_SKU.key,
          description: `${PRO_UPGRADE_SKU.description} "${target.name}" (included in plan)`,
          quantity: 1,
          unitAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
          amountCents: PRO_UPGRADE_SKU.unitAmountCents,
          status: BILLING_ROW_STATUS.planIncluded,
          informational: true,
          idempotencyKey: `${chargeKey}:0`,
          chargeKey,
          createdById: actor.user.id,
        })
        .onConflictDoNothing()
        .returning({ id: billingRows.id });
      await makeCaseProThroughPlan(tx, caseId, plan.payBy);
      if (row) {
        await recordBillingHistory(tx, {
          organizationId,
          category: 'case_billing',
          caseId,
          description: `Case "${target.name}" upgraded to Pro (included in plan)`,
          createdById: actor.user.id,
        });
        audit(tx, {
          billingRowId: row.id,
          amountCents: 0,
          listAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
          creditsAppliedCents: 0,
          invoicedCents: 0,
          paidWith: 'plan',
        });
      }
      return;
    }
    const { created, rows } = await recordCharge(tx, afterCommit, {
      organizationId,
      chargeKey,
      createdById: actor.user.id,
      lines: [
        {
          caseId,
          skuKey: PRO_UPGRADE_SKU.key,
          description: `${PRO_UPGRADE_SKU.description} "${target.name}"`,
          quantity: 1,
          unitAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
        },
      ],
    });
    if (created) {
      await recordBillingHistory(tx, {
        organizationId,
        category: 'case_billing',
        caseId,
        description: `Pro upgrade of case "${target.name}" charged`,
        createdById: actor.user.id,
      });
      const [charged] = rows;
      const creditsAppliedCents = charged!.creditsAppliedCents;
      const invoicedCents = charged!.amountCents - creditsAppliedCents;
      audit(tx, {
        billingRowId: charged!.id,
        amountCents: charged!.amountCents,
        listAmountCents: PRO_UPGRADE_SKU.unitAmountCents,
        creditsAppliedCents,
        invoicedCents,
        // The invoiced part is collected with the card on file (or once one is saved).
        paidWith: invoicedCents === 0 ? 'credits' : creditsAppliedCents === 0 ? 'card' : 'credits_and_card',
      });
    }
  });
  return { caseId, status: BILLING_ROW_STATUS.processing };
}
