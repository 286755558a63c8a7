import { count, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { tags } from '../../lib/db/schema';
import type { TestUser } from '../harness/actors';
import { invokeAudited } from '../harness/audit';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { createOrganizationTagAs, createTagAs, createTagRow, tagPeople, tagRow } from '../harness/tags';

const create = (user: TestUser, orgId: string, body: unknown) =>
  invoke(routes.createOrganizationTag, { token: user.accessToken, path: { orgId }, body });

const tagsOf = async (organizationId: string) =>
  (await db().select({ n: count() }).from(tags).where(eq(tags.organizationId, organizationId)))[0]!.n;

const caseTagNames = async (user: TestUser, caseId: string) =>
  (expectData(await invoke(routes.listCaseTags, { token: user.accessToken, path: { caseId } })).data ?? []).map(
    (t: { name: string }) => t.name,
  );

describe('POST /organization/{orgId}/tags', () => {
  it("creates the firm's organization tag, records it, and the firm sees it in every case but opposing counsel never", async () => {
    const p = await tagPeople();
    const { result, events } = await invokeAudited(routes.createOrganizationTag, {
      token: p.admin.accessToken,
      path: { orgId: p.organizationId },
      body: { name: ' Responsive ', textColor: '#abcdef', severity: 'warning', type: 'case' },
    });
    const tag = expectData(result, 201);
    expect(tag).toEqual({
      id: expect.any(String),
      name: 'Responsive',
      nameLowercase: 'responsive',
      backgroundColor: '#E5E7EB',
      textColor: '#ABCDEF',
      type: 'organization',
      severity: 'warning',
      origin: 'manual',
      creatorAccessType: 'org',
      isActive: true,
      caseId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await tagRow(tag.id)).createdById).toBe(p.admin.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'review.tag.created',
      organizationId: p.organizationId,
      caseId: null,
      targetType: 'tag',
      targetId: tag.id,
      metadata: { tagId: tag.id, name: 'Responsive', type: 'organization', side: 'org', severity: 'warning' },
    });
    expect(await caseTagNames(p.owner, p.caseId)).toEqual(['Responsive']);
    expect(await caseTagNames(p.viewer, p.caseId)).toEqual(['Responsive']);
    expect(await caseTagNames(p.opposing, p.caseId)).toEqual([]);
  });

  it('refuses a name an active organization tag has, in any letter case, with 409; allows it in another scope', async () => {
    const p = await tagPeople();
    const other = await tagPeople();
    await createOrganizationTagAs(p.owner, p.organizationId, { name: 'Hot' });
    const { result, events } = await invokeAudited(routes.createOrganizationTag, {
      token: p.owner.accessToken,
      path: { orgId: p.organizationId },
      body: { name: 'HOT' },
    });
    expectError(result, 409, 'CONFLICT');
    expect(events).toEqual([]);
    await createOrganizationTagAs(other.owner, other.organizationId, { name: 'Hot' });
    await createTagAs(p.owner, p.caseId, { name: 'hot' });
    await createTagRow({
      organizationId: p.organizationId,
      type: 'organization',
      name: 'Old',
      side: 'org',
      isActive: false,
    });
    await createOrganizationTagAs(p.owner, p.organizationId, { name: 'old' });
    expect(await tagsOf(p.organizationId)).toBe(4);
  });

  it('refuses members, opposing counsel and another organization', async () => {
    const p = await tagPeople();
    const other = await tagPeople();
    expectError(await create(p.colleague, p.organizationId, { name: 'A' }), 403, 'INSUFFICIENT_ROLE');
    expectError(await create(p.opposing, p.organizationId, { name: 'A' }), 403, 'INSUFFICIENT_ROLE');
    expectError(await create(other.owner, p.organizationId, { name: 'A' }), 403, 'NOT_A_MEMBER');
    expect(await tagsOf(p.organizationId)).toBe(0);
  });

  it.each([
    [{}, 'body.name'],
    [{ name: ' ' }, 'body.name'],
    [{ name: 'x'.repeat(101) }, 'body.name'],
    [{ name: 'A', backgroundColor: '#1234567' }, 'body.backgroundColor'],
    [{ name: 'A', severity: 'urgent' }, 'body.severity'],
  ])('answers 400 naming the field for %j', async (body, field) => {
    const p = await tagPeople();
    expectError(await create(p.owner, p.organizationId, body), 400, 'VALIDATION_FAILED', [field]);
    expect(await tagsOf(p.organizationId)).toBe(0);
  });
});

let counter = 0;
describeSecurity(routes.createOrganizationTag, {
  request: ({ organizationId }) => {
    counter += 1;
    return { path: { orgId: organizationId }, body: { name: `Org tag ${counter}` } };
  },
  succeeds: true,
  unchanged: async (_actor, request) => {
    const name = (request.body as { name: string }).name;
    expect(await db().select().from(tags).where(eq(tags.name, name))).toEqual([]);
  },
});
