import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { grantCredits } from '../../lib/billing/admin';
import { recordBillingHistory } from '../../lib/billing/history';
import { db } from '../../lib/db/client';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, putOnPlan } from '../harness/billing';
import { caseWithAccess } from '../harness/cases';
import { describeSecurity } from '../harness/security';

const history = (user: TestUser, query?: Record<string, string>) =>
  invoke(routes.listBillingHistory, { ...as(user), ...(query ? { query } : {}) });

/** Plan selected, card saved (fee collected), a case upgraded to Pro (charged and paid), credits granted by staff. */
async function organizationWithHistory() {
  const owner = await createUser();
  await putOnPlan(owner, 'tier2', { card: true });
  const target = await caseWithAccess(owner.organizationId, owner, 'owner', 'Doe v. Roe');
  expectData(await invoke(routes.upgradeCaseToPro, { ...as(owner), path: { caseId: target.id } }));
  await grantCredits(owner.organizationId, 5_000, 'Apology for the outage on the 3rd');
  return { owner, target };
}

describe('GET /billing/history', () => {
  describeSecurity(routes.listBillingHistory, { request: () => ({}), succeeds: true });

  it('answers an empty list for an organization without billing changes', async () => {
    const owner = await createUser();

    expect(expectData(await history(owner))).toEqual([]);
  });

  it('lists an entry per billing change, newest first', async () => {
    const { owner, target } = await organizationWithHistory();

    const data = expectData(await history(owner));

    expect(data.map((e: any) => [e.category, e.caseId])).toEqual([
      ['admin', null],
      ['invoicing', target.id],
      ['case_billing', target.id],
      ['invoicing', null],
      ['payment_method', null],
      ['subscription', null],
    ]);
    expect(data.map((e: any) => e.description).slice(2)).toEqual([
      'Pro upgrade of case "Doe v. Roe" charged',
      expect.stringMatching(/^1 billing row\(s\) paid \(invoice in_sandbox_\w+\)$/),
      'Card ending 4242 saved for payments',
      'Plan Practice (monthly) selected',
    ]);
    const times = data.map((e: any) => Date.parse(e.createdAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    // Changes made by a user name them; system changes (settlements, card saved) have createdBy null.
    expect(data[2]).toEqual({
      id: expect.any(String),
      category: 'case_billing',
      caseId: target.id,
      description: 'Pro upgrade of case "Doe v. Roe" charged',
      reason: null,
      createdBy: { id: owner.id, name: owner.name, email: owner.email },
      createdAt: expect.any(String),
    });
    expect(data[5].createdBy).toEqual({ id: owner.id, name: owner.name, email: owner.email });
    expect(data[3].createdBy).toBeNull();
  });

  it('shows staff entries with the neutral description, reason null and no createdBy key', async () => {
    const { owner } = await organizationWithHistory();

    const [staff] = expectData(await history(owner, { category: 'admin' }));

    expect(staff).toEqual({
      id: expect.any(String),
      category: 'admin',
      caseId: null,
      description: 'Billing adjusted by support',
      reason: null,
      createdAt: expect.any(String),
    });
    expect(staff).not.toHaveProperty('createdBy');
    expect(JSON.stringify(staff)).not.toMatch(/outage|5000|granted/);
  });

  it('shows the reason of an entry made by a user (only staff entries hide it)', async () => {
    const owner = await createUser();
    await recordBillingHistory(db(), {
      organizationId: owner.organizationId,
      category: 'invoicing',
      description: 'Invoice voided',
      reason: 'Duplicate invoice',
      createdById: owner.id,
    });

    const [entry] = expectData(await history(owner));

    expect(entry).toMatchObject({
      description: 'Invoice voided',
      reason: 'Duplicate invoice',
      createdBy: { id: owner.id },
    });
  });

  it.each([
    ['subscription', 1],
    ['payment_method', 1],
    ['invoicing', 2],
    ['case_billing', 1],
    ['admin', 1],
  ])('filters by category %s', async (category, count) => {
    const { owner } = await organizationWithHistory();

    const data = expectData(await history(owner, { category }));

    expect(data).toHaveLength(count);
    expect(data.every((e: any) => e.category === category)).toBe(true);
  });

  it('filters by case, and by case and category together', async () => {
    const { owner, target } = await organizationWithHistory();
    const otherCase = await caseWithAccess(owner.organizationId, owner);

    const byCase = expectData(await history(owner, { caseId: target.id }));
    const both = expectData(await history(owner, { caseId: target.id, category: 'case_billing' }));
    const none = expectData(await history(owner, { caseId: otherCase.id }));

    expect(byCase.map((e: any) => e.category)).toEqual(['invoicing', 'case_billing']);
    expect(byCase.every((e: any) => e.caseId === target.id)).toBe(true);
    expect(both.map((e: any) => e.description)).toEqual(['Pro upgrade of case "Doe v. Roe" charged']);
    expect(none).toEqual([]);
  });

  it('pages with limit and skip; 50 entries by default', async () => {
    const owner = await createUser();
    for (let index = 0; index < 55; index += 1) {
      await recordBillingHistory(db(), {
        organizationId: owner.organizationId,
        category: 'invoicing',
        description: `Entry ${index}`,
      });
    }

    const byDefault = expectData(await history(owner));
    const page = expectData(await history(owner, { limit: '3', skip: '2' }));

    expect(byDefault).toHaveLength(50);
    expect(byDefault[0].description).toBe('Entry 54');
    expect(page.map((e: any) => e.description)).toEqual(['Entry 52', 'Entry 51', 'Entry 50']);
  });

  it("holds only the header organization's entries", async () => {
    const { owner } = await organizationWithHistory();
    const other = await createUser();
    await grantCredits(other.organizationId, 100, 'Other');

    const mine = expectData(await history(owner));
    const theirs = expectData(await history(other));

    expect(mine).toHaveLength(6);
    expect(theirs.map((e: any) => e.category)).toEqual(['admin']);
  });

  it.each([
    ['an unknown category', { category: 'refunds' }, 'query.category'],
    ['a caseId over 200 characters', { caseId: 'c'.repeat(201) }, 'query.caseId'],
    ['limit above 200', { limit: '201' }, 'query.limit'],
    ['limit 0', { limit: '0' }, 'query.limit'],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, query, field) => {
    const owner = await createUser();

    expectError(await history(owner, query), 400, 'VALIDATION_FAILED', [field]);
  });
});
