import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import type { TestUser } from '../harness/actors';
import { invokeAudited } from '../harness/audit';
import { UNKNOWN_ID } from '../harness/ids';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { createOrganizationTagAs, createTagAs, createTagRow, tagPeople, tagRow } from '../harness/tags';

const update = (user: TestUser, orgId: string, tagId: string, body: unknown) =>
  invoke(routes.updateOrganizationTag, { token: user.accessToken, path: { orgId, tagId }, body });

describe('PATCH /organization/{orgId}/tags/{tagId}', () => {
  it('renames and recolours an organization tag, recording the fields changed', async () => {
    const p = await tagPeople();
    const tag = await createOrganizationTagAs(p.owner, p.organizationId, { name: 'Responsive' });
    const { result, events } = await invokeAudited(routes.updateOrganizationTag, {
      token: p.admin.accessToken,
      path: { orgId: p.organizationId, tagId: tag.id },
      body: { name: 'Non-responsive', severity: 'danger', textColor: '#111827' },
    });
    expect(expectData(result)).toMatchObject({
      id: tag.id,
      name: 'Non-responsive',
      nameLowercase: 'non-responsive',
      severity: 'danger',
      type: 'organization',
      caseId: null,
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'review.tag.updated',
      caseId: null,
      targetId: tag.id,
      metadata: {
        name: 'Non-responsive',
        fields: ['name', 'severity'],
        changes: { name: 'Non-responsive', severity: 'danger' },
        previous: { name: 'Responsive', severity: 'info' },
      },
    });
  });

  it('answers the tag unchanged with no event when nothing differs, and renames an imported organization tag', async () => {
    const p = await tagPeople();
    const tag = await createOrganizationTagAs(p.owner, p.organizationId, { name: 'Hot' });
    const { result, events } = await invokeAudited(routes.updateOrganizationTag, {
      token: p.owner.accessToken,
      path: { orgId: p.organizationId, tagId: tag.id },
      body: {},
    });
    expect(expectData(result)).toEqual(tag);
    expect(events).toEqual([]);
    const imported = await createTagRow({
      organizationId: p.organizationId,
      type: 'organization',
      name: 'Imp',
      origin: 'auto-import',
    });
    expect(expectData(await update(p.owner, p.organizationId, imported.id, { name: 'Imported' })).name).toBe(
      'Imported',
    );
  });

  it('answers 409 for a name taken by another active organization tag, and for a deleted tag', async () => {
    const p = await tagPeople();
    await createOrganizationTagAs(p.owner, p.organizationId, { name: 'Hot' });
    const cold = await createOrganizationTagAs(p.owner, p.organizationId, { name: 'Cold' });
    expectError(await update(p.owner, p.organizationId, cold.id, { name: 'hot' }), 409, 'CONFLICT');
    const old = await createTagRow({
      organizationId: p.organizationId,
      type: 'organization',
      name: 'Old',
      side: 'org',
      isActive: false,
    });
    expectError(await update(p.owner, p.organizationId, old.id, { name: 'New' }), 409, 'CONFLICT');
    expect((await tagRow(cold.id)).name).toBe('Cold');
    expect((await tagRow(old.id)).name).toBe('Old');
  });

  it('answers 403 for a system tag, 404 for case and user tags, another organization and unknown ids', async () => {
    const p = await tagPeople();
    const other = await tagPeople();
    const system = await createTagRow({ organizationId: p.organizationId, type: 'system', name: 'System' });
    const caseTag = await createTagAs(p.owner, p.caseId, { name: 'Case' });
    const userTag = await createTagAs(p.owner, p.caseId, { name: 'User', type: 'user' });
    const foreign = await createOrganizationTagAs(other.owner, other.organizationId, { name: 'Foreign' });
    const foreignSystem = await createTagRow({
      organizationId: other.organizationId,
      type: 'system',
      name: 'Foreign system',
    });
    const refused = await update(p.owner, p.organizationId, system.id, { name: 'X' });
    expectError(refused, 403, 'FORBIDDEN');
    expect(refused.body.error.message).toBe('System tags are read-only');
    for (const tagId of [caseTag.id, userTag.id, foreign.id, foreignSystem.id, UNKNOWN_ID, 'nope'])
      expectError(await update(p.owner, p.organizationId, tagId, { name: 'X' }), 404, 'NOT_FOUND');
    for (const row of [system, caseTag, userTag, foreign, foreignSystem])
      expect((await tagRow(row.id)).name).toBe(row.name);
  });

  it('refuses members and another organization', async () => {
    const p = await tagPeople();
    const other = await tagPeople();
    const tag = await createOrganizationTagAs(p.owner, p.organizationId, { name: 'Hot' });
    expectError(await update(p.colleague, p.organizationId, tag.id, { name: 'X' }), 403, 'INSUFFICIENT_ROLE');
    expectError(await update(other.owner, p.organizationId, tag.id, { name: 'X' }), 403, 'NOT_A_MEMBER');
    // Naming their own organization in the path does not reach this one's tag.
    expectError(await update(other.owner, other.organizationId, tag.id, { name: 'X' }), 404, 'NOT_FOUND');
    expect((await tagRow(tag.id)).name).toBe('Hot');
  });

  it.each([
    [{ name: '' }, 'body.name'],
    [{ backgroundColor: 'fff' }, 'body.backgroundColor'],
    [{ severity: 1 }, 'body.severity'],
  ])('answers 400 naming the field for %j', async (body, field) => {
    const p = await tagPeople();
    const tag = await createOrganizationTagAs(p.owner, p.organizationId, { name: 'Hot' });
    expectError(await update(p.owner, p.organizationId, tag.id, body), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.updateOrganizationTag, {
  request: async ({ organizationId }) => {
    const tag = await createTagRow({
      organizationId,
      type: 'organization',
      name: `Before ${randomBytes(4).toString('hex')}`,
      side: 'org',
    });
    return {
      path: { orgId: organizationId, tagId: tag.id },
      body: { name: `After ${randomBytes(4).toString('hex')}` },
    };
  },
  succeeds: true,
  unchanged: async (_actor, request) => {
    expect((await tagRow(request.path!.tagId!)).name).toMatch(/^Before /);
  },
});
