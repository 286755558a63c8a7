import { describe, expect, it } from 'vitest';
import type { RouteDefinition } from '../../lib/http/route';
import { caseWithOwner, memberWithAccess } from './cases';
import { expectData, expectError, invoke } from './invoke';
import { createProfile } from './material';
import { describeSecurity } from './security';

type Platform = 'professional_network' | 'chat_platform';

/**
 * The tests every profile list shares (GET /professional-network/{caseId}/profiles and
 * GET /chat-platform/{caseId}/profiles): one platform's profiles by name, never the other's;
 * opposing counsel sees only the visible ones; bad paging is 400; the route's security suite.
 */
export function describeProfileList(
  route: RouteDefinition,
  { platform, other, names }: { platform: Platform; other: Platform; names: { first: string; second: string } },
): void {
  const profiles = (token: string, caseId: string, query: Record<string, string> = {}) =>
    invoke(route, { token, path: { caseId }, query });

  describe(`${route.method} ${route.path}`, () => {
    it(`lists the case's ${platform} profiles by name, never its ${other} profiles`, async () => {
      // Prepare
      const s = await caseWithOwner();
      const second = await createProfile(s.caseId, platform, names.second, false);
      const first = await createProfile(s.caseId, platform, names.first, true);
      await createProfile(s.caseId, other, 'Cid Other', true);
      // Act
      const page = expectData(await profiles(s.owner.accessToken, s.caseId));
      // Assess
      expect(page.total).toBe(2);
      expect(page.data.map((p: { id: string }) => p.id)).toEqual([first.id, second.id]);
    });

    it('shows opposing counsel only the profiles marked visible to them', async () => {
      const s = await caseWithOwner();
      const first = await createProfile(s.caseId, platform, names.first, true);
      await createProfile(s.caseId, platform, names.second, false);
      const counsel = await memberWithAccess(s.organizationId, s.caseId, 'opposing_counsel', 'client');
      const page = expectData(await profiles(counsel.accessToken, s.caseId));
      expect(page).toMatchObject({ total: 1, data: [{ id: first.id }] });
    });

    it.each([
      [{ perPage: '0' }, 'query.perPage'],
      [{ sortOrder: 'up' }, 'query.sortOrder'],
    ])('answers 400 naming the field for %j', async (query, field) => {
      const s = await caseWithOwner();
      expectError(await profiles(s.owner.accessToken, s.caseId, query), 400, 'VALIDATION_FAILED', [field]);
    });
  });

  describeSecurity(route, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });
}
