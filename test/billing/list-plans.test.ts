import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { TIER_KEYS, TIERS } from '../../lib/billing/tiers';
import { createUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { as, putOnPlan } from './billing-helpers';
import { describeSecurity } from '../harness/security';

describe('GET /billing/plans', () => {
  describeSecurity(routes.listPlans, { request: () => ({}), succeeds: true });

  it('lists the seven self-serve tiers in order with their prices in cents', async () => {
    const owner = await createUser();

    const data = expectData(await invoke(routes.listPlans, as(owner)));

    expect(data.map((t: any) => [t.key, t.name, t.monthlyPriceCents, t.annualPriceCents])).toEqual([
      ['tier1', 'Solo', 4_900, 49_000],
      ['tier2', 'Practice', 9_900, 99_000],
      ['tier3', 'Team', 19_900, 199_000],
      ['tier4', 'Firm', 39_900, 399_000],
      ['tier5', 'Firm Pro', 79_900, 799_000],
      ['tier6', 'Enterprise', null, 1_499_000],
      ['tier7', 'Enterprise Plus', null, 2_999_000],
    ]);
    expect(data).toEqual(TIER_KEYS.map((key) => TIERS[key]));
  });

  it('marks the annual-only tiers, their cadences, and the tiers that include Pro cases', async () => {
    const owner = await createUser();

    const data = expectData(await invoke(routes.listPlans, as(owner)));

    expect(data.map((t: any) => [t.key, t.cadences, t.annualOnly, t.includesPro])).toEqual([
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

  it('answers the same catalog whatever the organization plan', async () => {
    const owner = await createUser();
    const before = expectData(await invoke(routes.listPlans, as(owner)));
    await putOnPlan(owner, 'tier3');

    expect(expectData(await invoke(routes.listPlans, as(owner)))).toEqual(before);
  });
});
