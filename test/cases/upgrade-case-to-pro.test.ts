import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { retryStuckCharges } from '../../lib/billing/invoice-charge';
import { completeSandboxCheckout } from '../../lib/billing/payment-methods';
import { usePaymentProcessor } from '../../lib/billing/processor';
import { SandboxProcessor } from '../../lib/billing/processor/sandbox';
import { PRO_UPGRADE_SKU } from '../../lib/billing/tiers';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { billingHistory, billingRows, cases, organizationPlans, organizations } from '../../lib/db/schema';
import { createCaseRow, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, caseRow, putOnPlan, rowsOfCase, sandboxProcessorWith, sessionIdOf } from '../harness/billing';
import { caseWithAccess, grantCase } from '../harness/cases';
import { joinOrganization } from '../harness/organizations';
import { describeSecurity } from '../harness/security';

const upgrade = (user: TestUser, caseId: string, organizationId = user.organizationId) =>
  invoke(routes.upgradeCaseToPro, { ...as(user, organizationId), path: { caseId } });

async function historyOfCase(caseId: string) {
  return db()
    .select()
    .from(billingHistory)
    .where(and(eq(billingHistory.caseId, caseId), eq(billingHistory.category, 'case_billing')));
}

/** An owner whose organization is on tier2 with a card on file (charges settle at once). */
async function ownerOnPlan(card = true) {
  const owner = await createUser();
  const selected = await putOnPlan(owner, 'tier2', { card });
  return { owner, selected };
}

afterEach(() => {
  usePaymentProcessor(undefined);
});

describe('POST /cases/{caseId}/pro-upgrade', () => {
  describeSecurity(routes.upgradeCaseToPro, {
    request: ({ caseId }) => ({ path: { caseId } }),
    setup: async (owner) => {
      await putOnPlan(owner, 'tier2', { card: true });
    },
    succeeds: true,
  });

  it('records one charge that is processing when invoiced, then paid with the card: the case turns Pro', async () => {
    const { owner } = await ownerOnPlan();
    const target = await caseWithAccess(owner.organizationId, owner, 'owner', 'Doe v. Roe');
    // Watch the processor call: the row must already be committed as processing when it is made.
    const sandbox = new SandboxProcessor();
    const seen: Array<{ idempotencyKey: string; lines: unknown; statuses: string[] }> = [];
    const observer = sandboxProcessorWith({
      chargeInvoice: async (input) => {
        const rows = await db().select().from(billingRows).where(eq(billingRows.chargeKey, input.metadata.chargeKey!));
        seen.push({ idempotencyKey: input.idempotencyKey, lines: input.lines, statuses: rows.map((r) => r.status) });
        return sandbox.chargeInvoice(input);
      },
    });
    usePaymentProcessor(observer);

    const answer = expectData(await upgrade(owner, target.id));

    expect(answer).toEqual({ caseId: target.id, status: 'processing' });
    expect(seen).toEqual([
      {
        idempotencyKey: `charge:case-pro-upgrade:${target.id}`,
        lines: [{ description: `Pro upgrade of case "Doe v. Roe"`, amountCents: 14_900 }],
        statuses: ['processing'],
      },
    ]);
    const rows = await rowsOfCase(target.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      organizationId: owner.organizationId,
      skuKey: PRO_UPGRADE_SKU.key,
      quantity: 1,
      unitAmountCents: 14_900,
      amountCents: 14_900,
      status: 'paid',
      informational: false,
      creditsAppliedCents: 0,
      chargeKey: `case-pro-upgrade:${target.id}`,
      createdById: owner.id,
      invoiceId: expect.stringMatching(/^in_sandbox_/),
    });
    expect((await caseRow(target.id)).isPro).toBe(true);
    const history = await historyOfCase(target.id);
    expect(history.map((h) => [h.description, h.createdById])).toEqual([
      [`Pro upgrade of case "Doe v. Roe" charged`, owner.id],
    ]);
  });

  it('without a card: the row is INVOICED and the case not Pro; a repeat charges nothing; saving a card pays it and then 409', async () => {
    const { owner, selected } = await ownerOnPlan(false);
    const target = await caseWithAccess(owner.organizationId, owner);

    const first = expectData(await upgrade(owner, target.id));
    const second = expectData(await upgrade(owner, target.id));

    expect(second).toEqual(first);
    expect(first).toEqual({ caseId: target.id, status: 'processing' });
    const rows = await rowsOfCase(target.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'INVOICED',
      amountCents: 14_900,
      invoiceId: expect.stringMatching(/^in_sandbox_/),
      hostedInvoiceUrl: expect.stringContaining('/_sandbox/invoices/'),
    });
    expect((await caseRow(target.id)).isPro).toBe(false);
    expect(await historyOfCase(target.id)).toHaveLength(1);

    await completeSandboxCheckout(sessionIdOf(selected.setupSessionUrl), '4242424242424242');

    const [paid] = await rowsOfCase(target.id);
    expect(paid!.status).toBe('paid');
    expect((await caseRow(target.id)).isPro).toBe(true);
    expectError(await upgrade(owner, target.id), 409, 'CONFLICT');
    expect(await rowsOfCase(target.id)).toHaveLength(1);
  });

  it('answers 409 CONFLICT for a case that is already Pro and records nothing', async () => {
    const { owner } = await ownerOnPlan();
    const target = await caseWithAccess(owner.organizationId, owner);
    await db().update(cases).set({ isPro: true }).where(eq(cases.id, target.id));

    expectError(await upgrade(owner, target.id), 409, 'CONFLICT');

    expect(await rowsOfCase(target.id)).toEqual([]);
  });

  it('keeps the charge processing when the processor fails after commit; the maintenance retry invoices it once', async () => {
    const { owner } = await ownerOnPlan();
    const target = await caseWithAccess(owner.organizationId, owner);
    usePaymentProcessor(
      sandboxProcessorWith({
        chargeInvoice: async () => {
          throw new Error('processor unavailable');
        },
      }),
    );

    expect(expectData(await upgrade(owner, target.id))).toEqual({ caseId: target.id, status: 'processing' });
    const [stuck] = await rowsOfCase(target.id);
    expect(stuck).toMatchObject({ status: 'processing', invoiceId: null });
    expect((await caseRow(target.id)).isPro).toBe(false);

    usePaymentProcessor(undefined);
    testClock.advance(61);
    expect(await retryStuckCharges()).toBe(1);

    const rows = await rowsOfCase(target.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'paid', invoiceId: expect.stringMatching(/^in_sandbox_/) });
    expect((await caseRow(target.id)).isPro).toBe(true);
  });

  it('on tier5 (includes Pro) turns the case Pro at once with an informational plan_included row; charged totals are unaffected', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier5', { card: true });
    const target = await caseWithAccess(owner.organizationId, owner, 'owner', 'Included v. Pro');

    expect(expectData(await upgrade(owner, target.id))).toEqual({ caseId: target.id, status: 'processing' });

    expect((await caseRow(target.id)).isPro).toBe(true);
    const rows = await rowsOfCase(target.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      status: 'plan_included',
      informational: true,
      amountCents: 14_900,
      unitAmountCents: 14_900,
      invoiceId: null,
      creditsAppliedCents: 0,
    });
    const statement = expectData(await invoke(routes.getCaseStatement, { ...as(owner), path: { caseId: target.id } }));
    expect(statement).toMatchObject({ isPro: true, total: 1, totalChargedCents: 0, totalInformationalCents: 14_900 });
    expect(statement.rows[0]).toMatchObject({ informational: true, status: 'plan_included' });
    const reconciliation = expectData(await invoke(routes.getReconciliation, as(owner)));
    expect(reconciliation).toMatchObject({ totalChargedCents: 79_900, totalInformationalCents: 14_900 });
    expectError(await upgrade(owner, target.id), 409, 'CONFLICT');
    expect(await rowsOfCase(target.id)).toHaveLength(1);
  });

  it('answers 403 FEATURE_DISABLED before a plan is selected (no case billing) and records nothing', async () => {
    const owner = await createUser();
    const target = await caseWithAccess(owner.organizationId, owner);

    expectError(await upgrade(owner, target.id), 403, 'FEATURE_DISABLED');

    expect(await rowsOfCase(target.id)).toEqual([]);
  });

  it('answers 403 FEATURE_DISABLED for a legacy-billed organization', async () => {
    const owner = await createUser();
    await db().update(organizations).set({ billingMode: 'legacy' }).where(eq(organizations.id, owner.organizationId));
    const target = await caseWithAccess(owner.organizationId, owner);

    expectError(await upgrade(owner, target.id), 403, 'FEATURE_DISABLED');
  });

  it('answers 403 NO_ACTIVE_PLAN when the organization plan is inactive, and records nothing', async () => {
    const { owner } = await ownerOnPlan();
    const target = await caseWithAccess(owner.organizationId, owner);
    await db()
      .update(organizationPlans)
      .set({ isActive: false })
      .where(eq(organizationPlans.organizationId, owner.organizationId));

    expectError(await upgrade(owner, target.id), 403, 'NO_ACTIVE_PLAN');

    expect(await rowsOfCase(target.id)).toEqual([]);
  });

  it('lets admin access to the case through', async () => {
    const { owner } = await ownerOnPlan();
    const target = await caseWithAccess(owner.organizationId, owner, 'admin');

    expect(expectData(await upgrade(owner, target.id))).toEqual({ caseId: target.id, status: 'processing' });
    expect(await rowsOfCase(target.id)).toHaveLength(1);
  });

  it.each(['viewer', 'opposing_counsel', null] as const)(
    'answers 403 INSUFFICIENT_ROLE with %s access to the case, and records nothing',
    async (access) => {
      const { owner } = await ownerOnPlan();
      const target = access
        ? await caseWithAccess(owner.organizationId, owner, access)
        : await createCaseRow(owner.organizationId);

      expectError(await upgrade(owner, target.id), 403, 'INSUFFICIENT_ROLE');

      expect(await rowsOfCase(target.id)).toEqual([]);
      expect((await caseRow(target.id)).isPro).toBe(false);
    },
  );

  it('answers 403 FORBIDDEN for a case of another organization than the header, even with owner access to it, and never charges it', async () => {
    const { owner } = await ownerOnPlan();
    const other = await createUser();
    await putOnPlan(other, 'tier2', { card: true });
    const foreign = await caseWithAccess(other.organizationId, other, 'owner', 'Foreign v. Case');
    // The caller belongs to both organizations and owns the case, but names their own organization.
    await joinOrganization(other.organizationId, owner, 'admin');
    await grantCase(foreign.id, owner.id, 'owner');

    const result = await upgrade(owner, foreign.id, owner.organizationId);

    expectError(result, 403, 'FORBIDDEN');
    expect(result.body.data).toBeUndefined();
    expect(JSON.stringify(result.body)).not.toContain('Foreign v. Case');
    expect(await rowsOfCase(foreign.id)).toEqual([]);
    expect((await caseRow(foreign.id)).isPro).toBe(false);
    // Naming the case's own organization works.
    expect(expectData(await upgrade(owner, foreign.id, other.organizationId))).toEqual({
      caseId: foreign.id,
      status: 'processing',
    });
  });

  it('answers 404 NOT_FOUND for an unknown or deleted case', async () => {
    const { owner } = await ownerOnPlan();
    const deleted = await caseWithAccess(owner.organizationId, owner);
    await db().update(cases).set({ deletedAt: new Date() }).where(eq(cases.id, deleted.id));

    expectError(await upgrade(owner, '0190c0de-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
    expectError(await upgrade(owner, deleted.id), 404, 'NOT_FOUND');
    expect(await rowsOfCase(deleted.id)).toEqual([]);
  });

  it('answers 404 NOT_FOUND for a caseId that is not a uuid, as for an unknown case', async () => {
    const { owner } = await ownerOnPlan();

    expectError(await upgrade(owner, 'case-1'), 404, 'NOT_FOUND');
  });

  it('CONCURRENCY: 50 simultaneous requests without a card record exactly one charge and all answer processing', async () => {
    const { owner } = await ownerOnPlan(false);
    const target = await caseWithAccess(owner.organizationId, owner);

    const results = await Promise.all(Array.from({ length: 50 }, () => upgrade(owner, target.id)));

    for (const result of results) expect(expectData(result)).toEqual({ caseId: target.id, status: 'processing' });
    const rows = await rowsOfCase(target.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('INVOICED');
    expect(await historyOfCase(target.id)).toHaveLength(1);
  });

  it('CONCURRENCY: 50 simultaneous requests with a card record exactly one paid charge; every answer is 200 processing or 409', async () => {
    const { owner } = await ownerOnPlan();
    const target = await caseWithAccess(owner.organizationId, owner);

    const results = await Promise.all(Array.from({ length: 50 }, () => upgrade(owner, target.id)));

    const statuses = results.map((r) => r.status);
    expect(
      statuses.filter((s) => s !== 200 && s !== 409),
      JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 409)?.body),
    ).toEqual([]);
    expect(statuses).toContain(200);
    for (const result of results) {
      if (result.status === 200) expect(result.body.data).toEqual({ caseId: target.id, status: 'processing' });
      else expectError(result, 409, 'CONFLICT');
    }
    const rows = await rowsOfCase(target.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('paid');
    expect((await caseRow(target.id)).isPro).toBe(true);
    expect(await historyOfCase(target.id)).toHaveLength(1);
  });

  it('CONCURRENCY: simultaneous upgrades of 10 different cases of one organization all succeed, one row and one invoice each', async () => {
    const { owner } = await ownerOnPlan();
    const targets = await Promise.all(Array.from({ length: 10 }, () => caseWithAccess(owner.organizationId, owner)));

    const results = await Promise.all(targets.map((target) => upgrade(owner, target.id)));

    for (const [index, result] of results.entries())
      expect(expectData(result)).toEqual({ caseId: targets[index]!.id, status: 'processing' });
    const rows = await Promise.all(targets.map(async (target) => rowsOfCase(target.id)));
    expect(rows.map((r) => r.length)).toEqual(Array(10).fill(1));
    expect(rows.map((r) => r[0]!.status)).toEqual(Array(10).fill('paid'));
    expect(new Set(rows.map((r) => r[0]!.invoiceId)).size).toBe(10);
  });
});
