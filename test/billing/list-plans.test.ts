import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { TIER_KEYS, TIERS } from '../../lib/billing/tiers';
import { FREE_PLAN } from '../../lib/organizations/plans';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, putOnPlan, urls } from '../harness/billing';
import { describeSecurity } from '../harness/security';

describe('GET /billing/plans', () => {
  describeSecurity(routes.listPlans, { request: () => ({}), succeeds: true });

  it('lists the free plan, then the seven self-serve tiers in order with their prices in cents', async () => {
    const owner = await createUser();

    const data = expectData(await invoke(routes.listPlans, as(owner)));

    expect(data.map((t: any) => [t.key, t.name, t.monthlyPriceCents, t.annualPriceCents])).toEqual([
      ['free', 'Free', 0, 0],
      ['tier1', 'Solo', 4_900, 49_000],
      ['tier2', 'Practice', 9_900, 99_000],
      ['tier3', 'Team', 19_900, 199_000],
      ['tier4', 'Firm', 39_900, 399_000],
      ['tier5', 'Firm Pro', 79_900, 799_000],
      ['tier6', 'Enterprise', null, 1_499_000],
      ['tier7', 'Enterprise Plus', null, 2_999_000],
    ]);
    expect(data.slice(1)).toEqual(TIER_KEYS.map((key) => ({ ...TIERS[key], selectable: true })));
  });

  it('marks the annual-only tiers, their cadences, and the tiers that include Pro cases', async () => {
    const owner = await createUser();

    const data = expectData(await invoke(routes.listPlans, as(owner)));

    expect(data.map((t: any) => [t.key, t.cadences, t.annualOnly, t.includesPro])).toEqual([
      ['free', [], false, false],
      ['tier1', ['monthly', 'annual'], false, false],
      ['tier2', ['monthly', 'annual'], false, false],
      ['tier3', ['monthly', 'annual'], false, false],
      ['tier4', ['monthly', 'annual'], false, false],
      ['tier5', ['monthly', 'annual'], false, true],
      ['tier6', ['annual'], true, true],
      ['tier7', ['annual'], true, true],
    ]);
    for (const tier of data) {
      expect(tier.seatCap).toBeGreaterThan(0);
      expect(tier.storageCapBytes).toBeGreaterThan(0);
      expect(tier.features).toEqual(expect.arrayContaining(['email_evidence', 'device_notes']));
    }
    expect(data.find((t: any) => t.key === 'tier5').features).toContain('pro_cases_included');
  });

  it('lists the free plan with its own limits, from FREE_PLAN, marked not selectable (POST /billing/plan refuses it)', async () => {
    const owner = await createUser();

    const [free, ...tiers] = expectData(await invoke(routes.listPlans, as(owner)));

    expect(free).toEqual({
      key: 'free',
      name: 'Free',
      monthlyPriceCents: 0,
      annualPriceCents: 0,
      seatCap: FREE_PLAN.seats,
      storageCapBytes: FREE_PLAN.storageBytes,
      deviceCap: FREE_PLAN.devices,
      casesPerMonth: FREE_PLAN.casesPerMonth,
      features: ['email_evidence', 'professional_network_evidence', 'chat_platform_evidence', 'device_notes'],
      cadences: [],
      annualOnly: false,
      includesPro: false,
      selectable: false,
    });
    expect(tiers.every((tier: any) => tier.selectable)).toBe(true);
    expectError(
      await invoke(routes.selectPlan, { ...as(owner), body: { tier: 'free', ...urls } }),
      400,
      'VALIDATION_FAILED',
      ['body.tier'],
    );
  });

  it('lists every limit enforced: cases a month and the features each tier adds (the feature matrix)', async () => {
    const owner = await createUser();

    const data = expectData(await invoke(routes.listPlans, as(owner)));

    expect(data.map((t: any) => [t.key, t.casesPerMonth])).toEqual([
      ['free', 3],
      ['tier1', 5],
      ['tier2', 20],
      ['tier3', 50],
      ['tier4', 150],
      ['tier5', null],
      ['tier6', null],
      ['tier7', null],
    ]);
    const added = data.map((t: any, i: number) => [
      t.key,
      t.features.filter((f: string) => i === 0 || !data[i - 1].features.includes(f)),
    ]);
    expect(added).toEqual([
      ['free', ['email_evidence', 'professional_network_evidence', 'chat_platform_evidence', 'device_notes']],
      ['tier1', []],
      ['tier2', []],
      ['tier3', ['billing_reports']],
      ['tier4', ['credits']],
      ['tier5', ['pro_cases_included']],
      ['tier6', ['priority_support']],
      ['tier7', ['dedicated_storage']],
    ]);
    for (const tier of data) expect(tier).not.toHaveProperty('aiTokensPerMonth');
  });

  it('answers the same catalog whatever the organization plan', async () => {
    const owner = await createUser();
    const before = expectData(await invoke(routes.listPlans, as(owner)));
    await putOnPlan(owner, 'tier3');

    expect(expectData(await invoke(routes.listPlans, as(owner)))).toEqual(before);
  });
});
