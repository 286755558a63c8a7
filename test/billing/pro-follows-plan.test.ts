import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { DELINQUENCY_DAYS } from '../../lib/billing/summary';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { auditEvents } from '../../lib/db/schema';
import { runMaintenance } from '../../lib/maintenance';
import { createUser, type TestUser, signIn } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { as, completeCheckoutOf, ledgerOf, putOnPlan, urls } from '../harness/billing';
import { caseWithAccess } from '../harness/cases';

/**
 * Issue 30 item 1: Pro through a plan that includes it lasts while that plan is in force and paid
 * (or within its days to pay). Leaving the plan, or becoming delinquent on it, ends the Pro of the
 * cases that had it only through the plan; a paid Pro upgrade is kept; the plan again (paid, or
 * within its days) brings their Pro back. Each change is audited and on the case statement.
 */

const DAY = 24 * 60 * 60;

const selectPlan = (user: TestUser, body: Record<string, unknown>) =>
  invoke(routes.selectPlan, { ...as(user), body: { ...urls, ...body } });
const upgrade = (user: TestUser, caseId: string) => invoke(routes.upgradeCaseToPro, { ...as(user), path: { caseId } });
const isPro = async (user: TestUser, caseId: string): Promise<boolean> =>
  expectData(await invoke(routes.getCase, { ...as(user), path: { caseId } })).isPro;
const statement = async (user: TestUser, caseId: string) =>
  expectData(await invoke(routes.getCaseStatement, { ...as(user), path: { caseId } }));
const proEvents = (caseId: string) =>
  db()
    .select({ action: auditEvents.action, metadata: auditEvents.metadata })
    .from(auditEvents)
    .where(and(eq(auditEvents.caseId, caseId)))
    .orderBy(auditEvents.sequence);

async function proCases(owner: TestUser, n: number) {
  const ids: string[] = [];
  for (let index = 0; index < n; index += 1) {
    const { id } = await caseWithAccess(owner.organizationId, owner, 'owner', `Matter ${index}`);
    expectData(await upgrade(owner, id));
    ids.push(id);
  }
  return ids;
}

afterEach(() => testClock.reset());

describe('Pro through the plan follows the plan', () => {
  it('no card: tier5, three plan-Pro cases, then tier1: none stays Pro; tier5 again brings them back', async () => {
    let owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier5');
    const ids = await proCases(owner, 3);
    for (const id of ids) expect(await isPro(owner, id)).toBe(true);

    testClock.advance(3600);
    owner = await signIn(owner);
    expectData(await selectPlan(owner, { tier: 'tier1' }));
    for (const id of ids) expect(await isPro(owner, id)).toBe(false);
    const ended = await statement(owner, ids[0]!);
    expect(ended.isPro).toBe(false);
    expect(ended.pro).toMatchObject({ source: null, until: null });
    expect(ended.pro.changes.map((c: { change: string }) => c.change)).toEqual(['ended', 'upgrade_requested']);
    expect(ended.pro.changes[0]).toMatchObject({ cause: 'plan_selected' });
    expect((await proEvents(ids[0]!)).map((e) => e.action)).toContain('case.pro.ended');

    // Back on tier5, still unpaid: Pro again, until the days to pay of the first unpaid fee end.
    expectData(await selectPlan(owner, { tier: 'tier5' }));
    const restored = await statement(owner, ids[1]!);
    expect(restored.isPro).toBe(true);
    expect(restored.pro.source).toBe('plan');
    expect(restored.pro.until).toEqual(expect.any(String));
    expect(restored.pro.changes[0]).toMatchObject({ change: 'restored', cause: 'plan_selected' });

    // The days to pay run out: reads say not Pro at once; maintenance records the end.
    testClock.advance(DELINQUENCY_DAYS * DAY);
    owner = await signIn(owner);
    for (const id of ids) expect(await isPro(owner, id)).toBe(false);
    const { planProEnded } = await runMaintenance();
    expect(planProEnded).toBeGreaterThanOrEqual(3);
    const lapsed = await statement(owner, ids[2]!);
    expect(lapsed.pro.changes[0]).toMatchObject({ change: 'ended', cause: 'base_fee_unpaid' });
  });

  it('with a card: tier1, tier5, eight plan-Pro cases, then tier1: credited the unused fee, none stays Pro', async () => {
    let owner = await createUser();
    testClock.freeze();
    await putOnPlan(owner, 'tier1', { card: true });
    expectData(await selectPlan(owner, { tier: 'tier5', cadence: 'monthly' }));
    const ids = await proCases(owner, 8);
    testClock.advance(60);
    owner = await signIn(owner);
    const back = expectData(await selectPlan(owner, { tier: 'tier1', cadence: 'monthly' }));
    expect(back.prorationCents).toBeLessThan(0);
    for (const id of ids) expect(await isPro(owner, id)).toBe(false);

    // The credit pays a ninth upgrade on tier1: a paid Pro, kept whatever the plan.
    const { id: ninth } = await caseWithAccess(owner.organizationId, owner, 'owner', 'Ninth');
    expectData(await upgrade(owner, ninth));
    expect(await isPro(owner, ninth)).toBe(true);
    expect((await statement(owner, ninth)).pro.source).toBe('paid');
    expect((await ledgerOf(owner.organizationId)).some((entry) => entry.kind === 'charge')).toBe(true);
    expectData(await selectPlan(owner, { tier: 'tier5', cadence: 'monthly' }));
    expectData(await selectPlan(owner, { tier: 'tier2', cadence: 'monthly' }));
    expect(await isPro(owner, ninth)).toBe(true);
    for (const id of ids) expect(await isPro(owner, id)).toBe(false);

    // A plan-Pro case that left the plan can be charged its own upgrade.
    expectData(await upgrade(owner, ids[0]!));
    expect(await isPro(owner, ids[0]!)).toBe(true);
    expect((await statement(owner, ids[0]!)).pro.source).toBe('paid');
  });

  it('delinquent on tier5: Pro ends after the days to pay, and paying brings it back for good', async () => {
    let owner = await createUser();
    testClock.freeze();
    const selected = await putOnPlan(owner, 'tier5');
    const ids = await proCases(owner, 2);
    expect((await statement(owner, ids[0]!)).pro.until).toEqual(expect.any(String));
    testClock.advance((DELINQUENCY_DAYS + 1) * DAY);
    owner = await signIn(owner);
    for (const id of ids) expect(await isPro(owner, id)).toBe(false);
    await runMaintenance();

    await completeCheckoutOf(selected.setupSessionUrl);
    for (const id of ids) expect(await isPro(owner, id)).toBe(true);
    const paid = await statement(owner, ids[0]!);
    expect(paid.pro).toMatchObject({ source: 'plan', until: null });
    expect(paid.pro.changes[0]).toMatchObject({ change: 'restored', cause: 'base_fee_paid' });
  });

  it("leaves another organization's Pro cases alone", async () => {
    const owner = await createUser();
    const other = await createUser();
    await putOnPlan(other, 'tier5');
    const [theirs] = await proCases(other, 1);
    await putOnPlan(owner, 'tier5');
    await proCases(owner, 1);
    expectData(await selectPlan(await signIn(owner), { tier: 'tier1' }));
    expect(await isPro(other, theirs!)).toBe(true);
  });
});
