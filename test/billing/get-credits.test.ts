import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { grantCredits } from '../../lib/billing/admin';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import { creditLedger, organizations, sandboxInvoices } from '../../lib/db/schema';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, caseRow, ledgerOf, putOnPlan, rowsOfCase, rowsOfOrganization, secondsApart } from '../harness/billing';
import { caseWithAccess } from '../harness/cases';
import { organizationRow } from '../harness/organizations';
import { describeSecurity } from '../harness/security';

const getCredits = (user: TestUser, query?: Record<string, string>) =>
  invoke(routes.getCredits, { ...as(user), ...(query ? { query } : {}) });
const upgrade = (user: TestUser, caseId: string) => invoke(routes.upgradeCaseToPro, { ...as(user), path: { caseId } });
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

describe('GET /billing/credits', () => {
  describeSecurity(routes.getCredits, { request: () => ({}), succeeds: true });

  it('answers a zero balance in usd with an empty ledger and no deduction for a new organization', async () => {
    const owner = await createUser();

    const data = expectData(await getCredits(owner));

    expect(data).toEqual({
      balanceCents: 0,
      currency: 'usd',
      effectiveDeductPercentage: 0,
      ledger: [],
      total: 0,
      limit: 50,
      skip: 0,
    });
  });

  it('shows a staff grant neutrally: the balance, the deduct percentage while positive, and a ledger entry without the staff reason', async () => {
    const owner = await createUser();
    expect(await grantCredits(owner.organizationId, 12_345, 'goodwill gesture')).toBe(12_345);

    const result = await getCredits(owner);
    const data = expectData(result);

    expect(data).toMatchObject({ balanceCents: 12_345, currency: 'usd', effectiveDeductPercentage: 100, total: 1 });
    expect(data.ledger).toEqual([
      {
        id: expect.any(String),
        amountCents: 12_345,
        balanceAfterCents: 12_345,
        kind: 'grant',
        description: 'Credits added by support',
        billingRowId: null,
        createdAt: expect.any(String),
      },
    ]);
    expect(JSON.stringify(result.body)).not.toMatch(/goodwill/i);
    expect((await organizationRow(owner.organizationId)).creditBalanceCents).toBe(12_345);
  });

  it('answers the organization deduct percentage while the balance is positive', async () => {
    const owner = await createUser();
    await db()
      .update(organizations)
      .set({ creditDeductPercentage: 40 })
      .where(eq(organizations.id, owner.organizationId));
    expect(expectData(await getCredits(owner)).effectiveDeductPercentage).toBe(0);

    await grantCredits(owner.organizationId, 100, 'Trial');

    expect(expectData(await getCredits(owner)).effectiveDeductPercentage).toBe(40);
  });

  it('pages the ledger newest first, 50 entries by default, total over all entries', async () => {
    const owner = await createUser();
    const instants = secondsApart(55);
    await db()
      .insert(creditLedger)
      .values(
        instants.map((createdAt, index) => ({
          organizationId: owner.organizationId,
          amountCents: index + 1,
          balanceAfterCents: ((index + 1) * (index + 2)) / 2,
          kind: 'purchase' as const,
          description: `Entry ${index + 1}`,
          billingRowId: null,
          createdAt,
          updatedAt: createdAt,
        })),
      );
    await db()
      .update(organizations)
      .set({ creditBalanceCents: (55 * 56) / 2 })
      .where(eq(organizations.id, owner.organizationId));

    const first = expectData(await getCredits(owner));
    const last = expectData(await getCredits(owner, { limit: '10', skip: '50' }));

    expect(first).toMatchObject({ balanceCents: 1540, total: 55, limit: 50, skip: 0 });
    expect(first.ledger).toHaveLength(50);
    expect(first.ledger.map((e: any) => e.description).slice(0, 3)).toEqual(['Entry 55', 'Entry 54', 'Entry 53']);
    expect(first.ledger.at(-1).description).toBe('Entry 6');
    expect(last).toMatchObject({ total: 55, limit: 10, skip: 50 });
    expect(last.ledger.map((e: any) => e.description)).toEqual(['Entry 5', 'Entry 4', 'Entry 3', 'Entry 2', 'Entry 1']);
  });

  it('answers 403 FEATURE_DISABLED while credits are turned off', async () => {
    const owner = await createUser();
    await grantCredits(owner.organizationId, 500, 'Before the switch');
    const restore = overrideConfig({ FEATURE_CREDITS: false });
    try {
      const result = await getCredits(owner);
      expectError(result, 403, 'FEATURE_DISABLED');
      expect(result.body.data).toBeUndefined();
    } finally {
      restore();
    }
    expect(expectData(await getCredits(owner)).balanceCents).toBe(500);
  });

  it.each([
    ['limit above 200', { limit: '201' }, 'query.limit'],
    ['limit 0', { limit: '0' }, 'query.limit'],
    ['limit not a number', { limit: 'ten' }, 'query.limit'],
    ['negative skip', { skip: '-1' }, 'query.skip'],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, query, field) => {
    const owner = await createUser();

    expectError(await getCredits(owner, query), 400, 'VALIDATION_FAILED', [field]);
  });

  it('accepts limit 200, the maximum', async () => {
    const owner = await createUser();

    expect(expectData(await getCredits(owner, { limit: '200' })).limit).toBe(200);
  });

  it('pays a charge from credits first: credits_applied_cents, a charge ledger entry, no invoice when fully covered', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier4', { card: true });
    await grantCredits(owner.organizationId, 20_000, 'Prepaid');
    const target = await caseWithAccess(owner.organizationId, owner);

    expectData(await upgrade(owner, target.id));

    const [row] = await rowsOfCase(target.id);
    expect(row).toMatchObject({ amountCents: 14_900, creditsAppliedCents: 14_900, status: 'paid', invoiceId: null });
    expect((await caseRow(target.id)).isPro).toBe(true);
    const data = expectData(await getCredits(owner));
    expect(data.balanceCents).toBe(5_100);
    expect(data.ledger[0]).toMatchObject({
      amountCents: -14_900,
      balanceAfterCents: 5_100,
      kind: 'charge',
      billingRowId: row!.id,
    });
    expect(data.ledger[1]).toMatchObject({ amountCents: 20_000, kind: 'grant' });
  });

  it('invoices only what the credits do not cover', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier4', { card: true });
    await grantCredits(owner.organizationId, 10_000, 'Prepaid');
    const target = await caseWithAccess(owner.organizationId, owner);

    expectData(await upgrade(owner, target.id));

    const [row] = await rowsOfCase(target.id);
    expect(row).toMatchObject({
      amountCents: 14_900,
      creditsAppliedCents: 10_000,
      status: 'paid',
      invoiceId: expect.stringMatching(/^in_sandbox_/),
    });
    const [invoice] = await db().select().from(sandboxInvoices).where(eq(sandboxInvoices.id, row!.invoiceId!));
    expect(invoice).toMatchObject({ amountCents: 4_900, status: 'paid' });
    const data = expectData(await getCredits(owner));
    expect(data).toMatchObject({ balanceCents: 0, effectiveDeductPercentage: 0 });
    expect(data.ledger[0]).toMatchObject({ amountCents: -10_000, balanceAfterCents: 0, kind: 'charge' });
  });

  it('draws only the deduct percentage of a charge', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier4', { card: true });
    await db()
      .update(organizations)
      .set({ creditDeductPercentage: 50 })
      .where(eq(organizations.id, owner.organizationId));
    await grantCredits(owner.organizationId, 20_000, 'Prepaid');
    const target = await caseWithAccess(owner.organizationId, owner);

    expectData(await upgrade(owner, target.id));

    const [row] = await rowsOfCase(target.id);
    expect(row!.creditsAppliedCents).toBe(7_450);
    expect(expectData(await getCredits(owner)).balanceCents).toBe(12_550);
  });

  it('CONCURRENCY: 10 simultaneous pro-upgrades against 30,000 cents of credits never take the balance below zero', async () => {
    const owner = await createUser();
    await putOnPlan(owner, 'tier4', { card: true });
    await grantCredits(owner.organizationId, 30_000, 'Prepaid');
    const targets = await Promise.all(Array.from({ length: 10 }, () => caseWithAccess(owner.organizationId, owner)));

    const results = await Promise.all(targets.map((target) => upgrade(owner, target.id)));

    for (const [index, result] of results.entries())
      expect(expectData(result)).toEqual({ caseId: targets[index]!.id, status: 'processing' });
    const organization = await organizationRow(owner.organizationId);
    expect(organization.creditBalanceCents).toBe(0);
    const ledger = await ledgerOf(owner.organizationId);
    expect(sum(ledger.map((e) => e.amountCents))).toBe(organization.creditBalanceCents);
    expect(ledger.every((e) => e.balanceAfterCents >= 0)).toBe(true);
    // Replaying the ledger in order gives every recorded balance.
    const ordered = [...ledger].sort(
      (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id),
    );
    let running = 0;
    for (const entry of ordered) {
      running += entry.amountCents;
      expect(entry.balanceAfterCents).toBe(running);
    }
    const upgrades = (await rowsOfOrganization(owner.organizationId)).filter((r) => r.skuKey === 'case_pro_upgrade');
    expect(upgrades).toHaveLength(10);
    expect(sum(upgrades.map((r) => r.creditsAppliedCents))).toBe(30_000);
    expect(upgrades.every((r) => r.creditsAppliedCents >= 0 && r.creditsAppliedCents <= 14_900)).toBe(true);
    expect(sum(ledger.filter((e) => e.kind === 'charge').map((e) => e.amountCents))).toBe(-30_000);
    expect(upgrades.every((r) => r.status === 'paid')).toBe(true);
    for (const target of targets) expect((await caseRow(target.id)).isPro).toBe(true);
  });
});
