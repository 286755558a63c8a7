import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createCaseRow, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';
import { createTagRow, tagPeople } from '../harness/tags';

/** A case with a tag of every kind and side, and one of another case and another organization. */
async function scenario() {
  const p = await tagPeople();
  const { organizationId, caseId } = p;
  const otherCase = await createCaseRow(organizationId);
  const stranger = await createUser();
  await Promise.all([
    createTagRow({ organizationId, type: 'system', name: 'System Privileged' }),
    createTagRow({ organizationId, type: 'organization', name: 'Firm Responsive', side: 'org' }),
    createTagRow({ organizationId, type: 'organization', name: 'Imported Org', origin: 'auto-import' }),
    createTagRow({ organizationId, caseId, type: 'case', name: 'Case Hot', side: 'org', createdById: p.owner.id }),
    createTagRow({ organizationId, caseId, type: 'case', name: 'Case Old', side: 'org', isActive: false }),
    createTagRow({ organizationId, caseId, type: 'user', name: 'Mine Owner', side: 'org', createdById: p.owner.id }),
    createTagRow({
      organizationId,
      caseId,
      type: 'user',
      name: 'Mine Colleague',
      side: 'org',
      createdById: p.colleague.id,
    }),
    createTagRow({
      organizationId,
      caseId,
      type: 'case',
      name: 'Their Case',
      side: 'opposing_council',
      createdById: p.opposing.id,
    }),
    createTagRow({
      organizationId,
      caseId,
      type: 'user',
      name: 'Their Own',
      side: 'opposing_council',
      createdById: p.opposing.id,
    }),
    createTagRow({ organizationId, caseId: otherCase.id, type: 'case', name: 'Other Case', side: 'org' }),
    createTagRow({
      organizationId,
      caseId: otherCase.id,
      type: 'user',
      name: 'Mine Elsewhere',
      side: 'org',
      createdById: p.owner.id,
    }),
    createTagRow({ organizationId: stranger.organizationId, type: 'organization', name: 'Stranger Org', side: 'org' }),
    createTagRow({ organizationId: stranger.organizationId, type: 'system', name: 'Stranger System' }),
  ]);
  const list = (user: TestUser, query: Record<string, string> = {}) =>
    invoke(routes.listCaseTags, { token: user.accessToken, path: { caseId }, query: { perPage: '100', ...query } });
  const namesOf = async (user: TestUser, query: Record<string, string> = {}) =>
    (expectData(await list(user, query)).data ?? []).map((t: { name: string }) => t.name);
  return { ...p, stranger, list, namesOf };
}

describe('GET /cases/{caseId}/tags', () => {
  it.each([
    ['the case owner', 'owner', ['Case Hot', 'Firm Responsive', 'Imported Org', 'Mine Owner', 'System Privileged']],
    [
      'a colleague',
      'colleague',
      ['Case Hot', 'Firm Responsive', 'Imported Org', 'Mine Colleague', 'System Privileged'],
    ],
    ['a viewer', 'viewer', ['Case Hot', 'Firm Responsive', 'Imported Org', 'System Privileged']],
    ['opposing counsel', 'opposing', ['System Privileged', 'Their Case', 'Their Own']],
  ] as const)('shows %s only the tags of their side, their own user tags and system tags', async (_l, who, names) => {
    const s = await scenario();
    expect(await s.namesOf(s[who])).toEqual(names);
  });

  it('answers the Tag entity with its case, by name', async () => {
    const s = await scenario();
    const page = expectData(await s.list(s.owner, { perPage: '10' }));
    expect(page).toMatchObject({ total: 5, page: 1, perPage: 10, totalPages: 1, nextPage: null, previousPage: null });
    expect(page.data[0]).toEqual({
      id: expect.any(String),
      name: 'Case Hot',
      nameLowercase: 'case hot',
      backgroundColor: '#E5E7EB',
      textColor: '#111827',
      type: 'case',
      severity: 'info',
      origin: 'manual',
      creatorAccessType: 'org',
      isActive: true,
      caseId: s.caseId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const firm = page.data.find((t: { name: string }) => t.name === 'Firm Responsive');
    expect(firm).toMatchObject({ type: 'organization', caseId: null });
  });

  it('shows deactivated tags only with includeInactive', async () => {
    const s = await scenario();
    expect(await s.namesOf(s.owner, { includeInactive: 'true' })).toContain('Case Old');
    expect(await s.namesOf(s.owner, { includeInactive: '0' })).not.toContain('Case Old');
    expect(await s.namesOf(s.opposing, { includeInactive: '1' })).not.toContain('Case Old');
  });

  it.each([
    ['system', ['System Privileged']],
    ['organization', ['Firm Responsive', 'Imported Org']],
    ['case', ['Case Hot']],
    ['user', ['Mine Owner']],
  ])('narrows to type %s', async (type, names) => {
    const s = await scenario();
    expect(await s.namesOf(s.owner, { type })).toEqual(names);
  });

  it('pages with the common paging, by name in either order', async () => {
    const s = await scenario();
    const second = expectData(await s.list(s.owner, { perPage: '2', page: '2' }));
    expect(second).toMatchObject({ total: 5, page: 2, perPage: 2, totalPages: 3, nextPage: 3, previousPage: 1 });
    expect(second.data.map((t: { name: string }) => t.name)).toEqual(['Imported Org', 'Mine Owner']);
    expect(await s.namesOf(s.owner, { sortOrder: 'desc' })).toEqual([
      'System Privileged',
      'Mine Owner',
      'Imported Org',
      'Firm Responsive',
      'Case Hot',
    ]);
    const skipped = expectData(
      await invoke(routes.listCaseTags, {
        token: s.owner.accessToken,
        path: { caseId: s.caseId },
        query: { skip: '4', limit: '3' },
      }),
    );
    expect(skipped).toMatchObject({ total: 5, skip: 4, limit: 3 });
    expect(skipped.data.map((t: { name: string }) => t.name)).toEqual(['System Privileged']);
  });

  it('reads the same number of statements whatever the number of tags', async () => {
    const s = await scenario();
    const few = await countQueries(() => s.list(s.opposing));
    const many = await countQueries(() => s.list(s.owner));
    expect(expectData(many.result).data).toHaveLength(5);
    expect(many.queries).toBe(few.queries);
  });

  it.each([
    [{ type: 'team' }, 'query.type'],
    [{ includeInactive: 'yes' }, 'query.includeInactive'],
    [{ perPage: '0' }, 'query.perPage'],
    [{ sortOrder: 'up' }, 'query.sortOrder'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const s = await scenario();
    expectError(await s.list(s.owner, query), 400, 'VALIDATION_FAILED', [field]);
  });

  it("refuses another organization's member, and shows them nothing", async () => {
    const s = await scenario();
    const result = await s.list(s.stranger);
    expectError(result, 403, 'INSUFFICIENT_ROLE');
    expect(JSON.stringify(result.body)).not.toContain('Case Hot');
  });
});

describeSecurity(routes.listCaseTags, {
  request: ({ caseId }) => ({ path: { caseId } }),
  succeeds: true,
  everyToken: true,
});
