import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { createTagRow, tagPeople } from '../harness/tags';

async function scenario() {
  const p = await tagPeople();
  const { organizationId, caseId } = p;
  const stranger = await createUser();
  await Promise.all([
    createTagRow({ organizationId, type: 'organization', name: 'Responsive', side: 'org', createdById: p.owner.id }),
    createTagRow({ organizationId, type: 'organization', name: 'Imported', origin: 'auto-import' }),
    createTagRow({ organizationId, type: 'organization', name: 'Archived', side: 'org', isActive: false }),
    createTagRow({ organizationId, type: 'system', name: 'System' }),
    createTagRow({ organizationId, caseId, type: 'case', name: 'Case Tag', side: 'org' }),
    createTagRow({ organizationId, caseId, type: 'user', name: 'User Tag', side: 'org', createdById: p.owner.id }),
    createTagRow({ organizationId, caseId, type: 'case', name: 'Their Tag', side: 'opposing_council' }),
    createTagRow({ organizationId: stranger.organizationId, type: 'organization', name: 'Stranger', side: 'org' }),
  ]);
  const list = (user: TestUser, query: Record<string, string> = {}, orgId = organizationId) =>
    invoke(routes.listOrganizationTags, { token: user.accessToken, path: { orgId }, query });
  const namesOf = async (user: TestUser, query: Record<string, string> = {}) =>
    (expectData(await list(user, query)).data ?? []).map((t: { name: string }) => t.name);
  return { ...p, stranger, list, namesOf };
}

describe('GET /organization/{orgId}/tags', () => {
  it("lists the organization's own tags by name to its owners and admins, not case, user, system or another organization's", async () => {
    const s = await scenario();
    expect(await s.namesOf(s.owner)).toEqual(['Imported', 'Responsive']);
    expect(await s.namesOf(s.admin)).toEqual(['Imported', 'Responsive']);
    const page = expectData(await s.list(s.owner, { perPage: '1' }));
    expect(page).toMatchObject({ total: 2, page: 1, perPage: 1, totalPages: 2, nextPage: 2 });
    expect(page.data[0]).toMatchObject({
      name: 'Imported',
      type: 'organization',
      caseId: null,
      creatorAccessType: null,
    });
  });

  it('shows deactivated tags only with includeInactive, in either order', async () => {
    const s = await scenario();
    expect(await s.namesOf(s.owner, { includeInactive: 'true', sortOrder: 'desc' })).toEqual([
      'Responsive',
      'Imported',
      'Archived',
    ]);
  });

  it.each([
    ['a member', 'colleague'],
    ['a client with opposing-counsel access', 'opposing'],
  ] as const)('refuses %s with 403', async (_label, who) => {
    const s = await scenario();
    expectError(await s.list(s[who]), 403, 'INSUFFICIENT_ROLE');
  });

  it("refuses another organization's owner, and never lists another organization's tags", async () => {
    const s = await scenario();
    const result = await s.list(s.stranger);
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(JSON.stringify(result.body)).not.toContain('Responsive');
    const own = await invoke(routes.listOrganizationTags, {
      token: s.stranger.accessToken,
      path: { orgId: s.stranger.organizationId },
    });
    expect(expectData(own).data.map((t: { name: string }) => t.name)).toEqual(['Stranger']);
  });

  it.each([
    [{ includeInactive: 'maybe' }, 'query.includeInactive'],
    [{ perPage: '101' }, 'query.perPage'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const s = await scenario();
    expectError(await s.list(s.owner, query), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.listOrganizationTags, {
  request: ({ organizationId }) => ({ path: { orgId: organizationId } }),
  succeeds: true,
});
