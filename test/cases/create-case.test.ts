import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { putOnPlan } from '../harness/billing';
import { ownerWithCase } from '../harness/cases';

describe('POST /cases', () => {
  it('creates a case in the header organization with the creator as owner, then lists and gets it', async () => {
    const { owner, as, created } = await ownerWithCase();
    expect(created).toMatchObject({
      organizationId: owner.organizationId,
      name: 'Lee v. Roe',
      isPro: false,
      archivedAt: null,
      deletedAt: null,
      access: 'owner',
    });
    const list = expectData(await invoke(routes.listCases, as));
    expect(list).toMatchObject({ total: 1, data: [expect.objectContaining({ id: created.id })] });
    expect(expectData(await invoke(routes.getCase, { ...as, path: { caseId: created.id } }))).toMatchObject({
      id: created.id,
      access: 'owner',
    });
  });

  it.each([
    [{}, 'body.name'],
    [{ name: '' }, 'body.name'],
    [{ name: 'x'.repeat(101) }, 'body.name'],
    [{ name: 'Lee\u0000Roe' }, 'body.name'],
  ])('answers 400 naming the field for %j', async (body, field) => {
    const owner = await createUser();
    expectError(
      await invoke(routes.createCase, { token: owner.accessToken, organization: owner.organizationId, body }),
      400,
      'VALIDATION_FAILED',
      [field],
    );
  });

  it('ignores a field the contract does not show (tolerant reader): the case is opened without it', async () => {
    const owner = await createUser();
    const created = expectData(
      await invoke(routes.createCase, {
        token: owner.accessToken,
        organization: owner.organizationId,
        body: { name: 'Extra v. Field', isPro: true, extra: 1 },
      }),
      201,
    );
    expect(created).toMatchObject({ name: 'Extra v. Field', isPro: false });
    expect(created).not.toHaveProperty('extra');
  });
});

// Every role and token kind opens a case in one organization: more than the free plan's cases a
// month, so the organization is on a tier without a case cap (the cap: test/billing/cases-per-month).
describeSecurity(routes.createCase, {
  request: () => ({ body: { name: 'Secured v. Case' } }),
  succeeds: true,
  setup: async (owner) => void (await putOnPlan(owner, 'tier5', { card: true })),
});
