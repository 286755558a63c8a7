import { and, eq, isNull, lte, notInArray, or, sql } from 'drizzle-orm';
import { recordAudit } from '../audit/record';
import { addDays, now } from '../clock';
import type { Tx } from '../db/client';
import { cases } from '../db/schema/cases';
import { organizations } from '../db/schema/organizations';
import { transaction } from '../db/transaction';
import { isProNow, setCasesPlanPro } from '../cases/pro-status';
import { enforcedStandingOf } from './enforced-plan';
import { DELINQUENCY_DAYS } from './summary';
import { TIER_KEYS, TIERS } from './tiers';

/**
 * Pro through the plan follows the plan's payment (issue 30). A case is Pro for one of two reasons
 * (`cases.pro_source`): a Pro upgrade was paid for it ('paid', kept for good), or a Pro-including
 * tier is in force ('plan'): selected and paid, or selected and still within its days to pay, when
 * `pro_until` holds the end of those days. Whenever the plan or its payment changes, the
 * organization's plan-Pro cases are aligned in the same transaction; maintenance ends the Pro of a
 * plan whose days to pay ran out. Every change is audited on the case.
 */

type CaseRow = typeof cases.$inferSelect;

/** The case's Pro as the case statement shows it. */
export function proStatusOf(row: Pick<CaseRow, 'isPro' | 'proUntil' | 'proSource'>) {
  const isPro = isProNow(row);
  return {
    isPro,
    source: isPro ? row.proSource : null,
    until: isPro ? (row.proUntil?.toISOString() ?? null) : null,
  };
}

/** The tiers that include Pro for every case. */
export const PRO_TIERS = TIER_KEYS.filter((key) => TIERS[key].includesPro);

/** What changed the plan-Pro of an organization's cases. */
export type PlanProCause = 'plan_selected' | 'base_fee_paid' | 'base_fee_failed';

/**
 * Brings the organization's plan-Pro cases in line with its plan as it now stands (read in `tx`,
 * after the change): Pro, until the end of the days to pay when the fee is unpaid, while a
 * Pro-including tier is in force; not Pro otherwise. Cases whose Pro was paid for are never
 * touched. Two or three queries whatever the number of cases.
 */
export async function alignPlanPro(tx: Tx, organizationId: string, cause: PlanProCause): Promise<void> {
  const [standing] = await tx
    .select({
      billingMode: organizations.billingMode,
      billingTier: organizations.billingTier,
      baseFeeFailedAt: organizations.baseFeeFailedAt,
    })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  if (!standing) return;
  const plan = enforcedStandingOf(standing);
  const planCases = await tx
    .select({ id: cases.id, isPro: cases.isPro, proUntil: cases.proUntil })
    .from(cases)
    .where(and(eq(cases.organizationId, organizationId), eq(cases.proSource, 'plan')));
  const until = plan.includesPro ? plan.payBy : null;
  const changed = planCases.filter((row) =>
    plan.includesPro ? !row.isPro || row.proUntil?.getTime() !== until?.getTime() : row.isPro,
  );
  if (changed.length === 0) return;
  await setCasesPlanPro(
    tx,
    changed.map((row) => row.id),
    plan.includesPro,
    until,
  );
  for (const row of changed) {
    const wasPro = isProNow(row);
    if (wasPro === plan.includesPro) continue;
    recordAudit(tx, {
      action: plan.includesPro ? 'case.pro.restored' : 'case.pro.ended',
      organizationId,
      caseId: row.id,
      target: { type: 'case', id: row.id },
      metadata: { source: 'plan', cause, tier: standing.billingTier, until: until?.toISOString() ?? null },
    });
  }
}

/**
 * Maintenance: ends the plan-Pro of cases whose plan no longer includes it: an unpaid plan's days
 * to pay ran out (`pro_until` passed; reads already treat those cases as not Pro), or a row that
 * predates the alignment still says Pro under a plan without it. At most `limit` cases a run.
 */
export async function endLapsedPlanPro(limit = 500): Promise<number> {
  const at = now();
  return transaction(async (tx) => {
    // The organizations are locked as plan selection and payment lock them, so a plan restored
    // meanwhile is seen (the rows are re-checked once the lock is had) and its Pro is not ended.
    const lapsed = await tx
      .select({ id: cases.id, organizationId: cases.organizationId, proUntil: cases.proUntil })
      .from(cases)
      .innerJoin(organizations, eq(organizations.id, cases.organizationId))
      .where(
        and(
          eq(cases.isPro, true),
          eq(cases.proSource, 'plan'),
          or(
            lte(cases.proUntil, at),
            sql`${organizations.billingMode} <> 'pay_as_you_go'`,
            isNull(organizations.billingTier),
            notInArray(organizations.billingTier, PRO_TIERS),
            lte(organizations.baseFeeFailedAt, addDays(at, -DELINQUENCY_DAYS)),
          ),
        ),
      )
      .limit(limit)
      .for('no key update', { of: organizations });
    if (lapsed.length === 0) return 0;
    await setCasesPlanPro(
      tx,
      lapsed.map((row) => row.id),
      false,
      null,
    );
    for (const row of lapsed) {
      recordAudit(tx, {
        action: 'case.pro.ended',
        organizationId: row.organizationId,
        caseId: row.id,
        target: { type: 'case', id: row.id },
        metadata: {
          source: 'plan',
          cause: row.proUntil && row.proUntil <= at ? 'base_fee_unpaid' : 'plan_without_pro',
          endedAt: (row.proUntil && row.proUntil <= at ? row.proUntil : at).toISOString(),
        },
      });
    }
    return lapsed.length;
  });
}
