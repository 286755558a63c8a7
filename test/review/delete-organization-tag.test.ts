import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { emailTags } from '../../lib/db/schema';
import type { TestUser } from '../harness/actors';
import { invokeAudited } from '../harness/audit';
import { UNKNOWN_ID } from '../harness/ids';
import { expectData, expectError, invoke } from '../harness/invoke';
import { seedThread } from '../harness/material';
import { describeSecurity } from '../harness/security';
import { createOrganizationTagAs, createTagAs, createTagRow, tagPeople, tagRow } from '../harness/tags';

const remove = (user: TestUser, orgId: string, tagId: string) =>
  invoke(routes.deleteOrganizationTag, { token: user.accessToken, path: { orgId, tagId } });

describe('DELETE /organization/{orgId}/tags/{tagId}', () => {
  it('deactivates the tag, keeps its links, answers it and records it; the cases list it no more', async () => {
    const p = await tagPeople();
    const tag = await createOrganizationTagAs(p.owner, p.organizationId, { name: 'Responsive' });
    await seedThread(p.caseId, [{ minute: 0, tagIds: [tag.id] }]);
    const { result, events } = await invokeAudited(routes.deleteOrganizationTag, {
      token: p.admin.accessToken,
      path: { orgId: p.organizationId, tagId: tag.id },
    });
    expect(expectData(result)).toMatchObject({ id: tag.id, isActive: false, type: 'organization' });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'review.tag.deactivated',
      caseId: null,
      targetId: tag.id,
      metadata: { tagId: tag.id, name: 'Responsive', type: 'organization', side: 'org' },
    });
    const links = await db().select().from(emailTags).where(eq(emailTags.tagId, tag.id));
    expect(links).toHaveLength(1);
    expect(links[0]!.removedAt).toBeNull();
    const listed = expectData(
      await invoke(routes.listCaseTags, { token: p.owner.accessToken, path: { caseId: p.caseId } }),
    );
    expect(listed.total).toBe(0);
    // Deleting again answers the tag unchanged, recording nothing.
    const again = await invokeAudited(routes.deleteOrganizationTag, {
      token: p.owner.accessToken,
      path: { orgId: p.organizationId, tagId: tag.id },
    });
    expect(expectData(again.result)).toMatchObject({ id: tag.id, isActive: false });
    expect(again.events).toEqual([]);
  });

  it('answers 403 for a system tag, 404 for case tags, another organization and unknown ids', async () => {
    const p = await tagPeople();
    const other = await tagPeople();
    const system = await createTagRow({ organizationId: p.organizationId, type: 'system', name: 'System' });
    const caseTag = await createTagAs(p.owner, p.caseId, { name: 'Case' });
    const foreign = await createOrganizationTagAs(other.owner, other.organizationId, { name: 'Foreign' });
    expectError(await remove(p.owner, p.organizationId, system.id), 403, 'FORBIDDEN');
    for (const tagId of [caseTag.id, foreign.id, UNKNOWN_ID, 'nope'])
      expectError(await remove(p.owner, p.organizationId, tagId), 404, 'NOT_FOUND');
    expectError(await remove(other.owner, p.organizationId, foreign.id), 403, 'NOT_A_MEMBER');
    expectError(await remove(p.colleague, p.organizationId, foreign.id), 403, 'INSUFFICIENT_ROLE');
    for (const row of [system, caseTag, foreign]) expect((await tagRow(row.id)).isActive).toBe(true);
  });
});

describeSecurity(routes.deleteOrganizationTag, {
  request: async ({ organizationId }) => {
    const tag = await createTagRow({
      organizationId,
      type: 'organization',
      name: `Doomed ${randomBytes(4).toString('hex')}`,
      side: 'org',
    });
    return { path: { orgId: organizationId, tagId: tag.id } };
  },
  succeeds: true,
  unchanged: async (_actor, request) => {
    expect((await tagRow(request.path!.tagId!)).isActive).toBe(true);
  },
});
