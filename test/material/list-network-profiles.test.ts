import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { createProfile } from '../harness/material';

const profiles = (token: string, caseId: string, query: Record<string, string> = {}) =>
  invoke(routes.listNetworkProfiles, { token, path: { caseId }, query });

describe('GET /professional-network/{caseId}/profiles', () => {
  it("lists the case's network profiles by name, never its chat profiles", async () => {
    // Prepare
    const s = await caseWithOwner();
    const bob = await createProfile(s.caseId, 'professional_network', 'Bob Roe', false);
    const ann = await createProfile(s.caseId, 'professional_network', 'Ann Lee', true);
    await createProfile(s.caseId, 'chat_platform', 'cid#3', true);
    // Act
    const page = expectData(await profiles(s.owner.accessToken, s.caseId));
    // Assess
    expect(page.total).toBe(2);
    expect(page.data.map((p: { id: string }) => p.id)).toEqual([ann.id, bob.id]);
  });

  it('shows opposing counsel only the profiles marked visible to them', async () => {
    const s = await caseWithOwner();
    const ann = await createProfile(s.caseId, 'professional_network', 'Ann Lee', true);
    await createProfile(s.caseId, 'professional_network', 'Bob Roe', false);
    const counsel = await memberWithAccess(s.organizationId, s.caseId, 'opposing_counsel', 'client');
    const page = expectData(await profiles(counsel.accessToken, s.caseId));
    expect(page).toMatchObject({ total: 1, data: [{ id: ann.id }] });
  });

  it.each([
    [{ perPage: '0' }, 'query.perPage'],
    [{ sortOrder: 'up' }, 'query.sortOrder'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const s = await caseWithOwner();
    expectError(await profiles(s.owner.accessToken, s.caseId, query), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.listNetworkProfiles, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });
