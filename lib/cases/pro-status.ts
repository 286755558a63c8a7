import { eq, inArray } from 'drizzle-orm';
import { now } from '../clock';
import type { Tx } from '../db/client';
import { cases } from '../db/schema/cases';

/**
 * A case's Pro (`is_pro`, `pro_source`, `pro_until`), written only here: billing decides when a
 * case turns Pro or stops being Pro (lib/billing/case-pro.ts) and calls these to write it.
 */

type CaseRow = typeof cases.$inferSelect;

/** Whether the case is Pro at this moment (Pro through an unpaid plan ends with its days to pay). */
export function isProNow(row: Pick<CaseRow, 'isPro' | 'proUntil'>): boolean {
  return row.isPro && (row.proUntil === null || row.proUntil > now());
}

/** The case turns Pro through its organization's plan, until `until` (the end of the days to pay; null: for good). */
export async function makeCaseProThroughPlan(tx: Tx, caseId: string, until: Date | null): Promise<void> {
  await tx.update(cases).set({ isPro: true, proSource: 'plan', proUntil: until }).where(eq(cases.id, caseId));
}

/** The cases' Pro upgrade was paid: Pro for good. */
export async function makeCasesProPaid(tx: Tx, caseIds: string[]): Promise<void> {
  await tx.update(cases).set({ isPro: true, proSource: 'paid', proUntil: null }).where(inArray(cases.id, caseIds));
}

/** Plan-Pro cases brought in line with their plan: Pro until `until`, or not Pro (`isPro` false, `until` null). */
export async function setCasesPlanPro(tx: Tx, caseIds: string[], isPro: boolean, until: Date | null): Promise<void> {
  await tx.update(cases).set({ isPro, proUntil: until }).where(inArray(cases.id, caseIds));
}
