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
import { createTagAs, createTagRow, tagPeople, tagRow } from '../harness/tags';

const remove = (user: TestUser, caseId: string, tagId: string) =>
  invoke(routes.deleteCaseTag, { token: user.accessToken, path: { caseId, tagId } });

const namesListed = async (user: TestUser, caseId: string, includeInactive = false) =>
  (
    expectData(
      await invoke(routes.listCaseTags, {
        token: user.accessToken,
        path: { caseId },
        query: includeInactive ? { includeInactive: 'true' } : {},
      }),
    ).data ?? []
  ).map((t: { name: string }) => t.name);

describe('DELETE /cases/{caseId}/tags/{tagId}', () => {
  it("takes a deleted tag off the items' current tags, the filters and the search, keeping its history", async () => {
    const p = await tagPeople();
    const tag = await createTagAs(p.owner, p.caseId, { name: 'Hot' });
    const { threadId, emailIds } = await seedThread(p.caseId, [{ minute: 0, tagIds: [tag.id] }, { minute: 1 }]);
    const thread = async (query: Record<string, string> = {}) =>
      expectData(
        await invoke(routes.listThreadEmails, {
          token: p.owner.accessToken,
          path: { caseId: p.caseId, threadId },
          query,
        }),
      );
    const search = async (query: Record<string, string>) =>
      expectData(await invoke(routes.searchCase, { token: p.owner.accessToken, path: { caseId: p.caseId }, query }));
    // Before: the tag is on the first email everywhere.
    expect((await thread({ tags: tag.id })).total).toBe(1);
    expect((await search({ q: 'body' })).facets.tags.map((f: { tagId: string }) => f.tagId)).toEqual([tag.id]);
    expectData(await remove(p.owner, p.caseId, tag.id));
    const after = await thread();
    const tagged = after.data.find((e: { id: string }) => e.id === emailIds[0]);
    expect(tagged.tags).toEqual([]);
    expect(tagged.attachedTags).toMatchObject([{ tagId: tag.id, tag: 'Hot', removedAt: null }]);
    expect((await thread({ tags: tag.id })).total).toBe(0);
    expect((await thread({ excludeTags: tag.id })).total).toBe(2);
    expect((await thread({ untagged: 'true' })).total).toBe(2);
    expect((await search({ q: 'body' })).facets.tags).toEqual([]);
    expect((await search({ q: 'body', tags: tag.id })).total).toBe(0);
  });

  it('deactivates the tag, keeps every link and its history, answers the tag and records it', async () => {
    const p = await tagPeople();
    const tag = await createTagAs(p.owner, p.caseId, { name: 'Hot' });
    const { emailIds } = await seedThread(p.caseId, [
      { minute: 0, tagIds: [tag.id] },
      { minute: 1, removedTagIds: [tag.id] },
    ]);
    const { result, events } = await invokeAudited(routes.deleteCaseTag, {
      token: p.colleague.accessToken,
      path: { caseId: p.caseId, tagId: tag.id },
    });
    expect(expectData(result)).toMatchObject({ id: tag.id, name: 'Hot', isActive: false, caseId: p.caseId });
    expect((await tagRow(tag.id)).isActive).toBe(false);
    const links = await db().select().from(emailTags).where(eq(emailTags.tagId, tag.id));
    expect(links.map((l) => [l.emailId, l.removedAt === null]).sort()).toEqual(
      [
        [emailIds[0], true],
        [emailIds[1], false],
      ].sort(),
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'review.tag.deactivated',
      caseId: p.caseId,
      targetType: 'tag',
      targetId: tag.id,
      metadata: { tagId: tag.id, name: 'Hot', type: 'case', side: 'org' },
    });
    expect(await namesListed(p.owner, p.caseId)).not.toContain('Hot');
    expect(await namesListed(p.owner, p.caseId, true)).toContain('Hot');
  });

  it('answers the deleted tag again unchanged, recording nothing, when deleted twice', async () => {
    const p = await tagPeople();
    const tag = await createTagAs(p.owner, p.caseId, { name: 'Hot', type: 'user' });
    const first = expectData(await remove(p.owner, p.caseId, tag.id));
    const { result, events } = await invokeAudited(routes.deleteCaseTag, {
      token: p.owner.accessToken,
      path: { caseId: p.caseId, tagId: tag.id },
    });
    expect(expectData(result)).toEqual(first);
    expect(events).toEqual([]);
  });

  it("answers 404 for another member's user tag, the other side's tags, an unknown id", async () => {
    const p = await tagPeople();
    const other = await tagPeople();
    const colleagues = await createTagAs(p.colleague, p.caseId, { name: 'Colleague only', type: 'user' });
    const theirs = await createTagAs(p.opposing, p.caseId, { name: 'Theirs' });
    const firms = await createTagAs(p.owner, p.caseId, { name: 'Firm' });
    const foreign = await createTagAs(other.owner, other.caseId, { name: 'Foreign' });
    for (const [user, tagId] of [
      [p.owner, colleagues.id],
      [p.owner, theirs.id],
      [p.opposing, firms.id],
      [p.owner, foreign.id],
      [p.owner, UNKNOWN_ID],
      [p.owner, 'x'],
    ] as const) {
      expectError(await remove(user, p.caseId, tagId), 404, 'NOT_FOUND');
    }
    for (const tag of [colleagues, theirs, firms, foreign]) expect((await tagRow(tag.id)).isActive).toBe(true);
    expect(await namesListed(p.opposing, p.caseId)).toEqual(['Theirs']);
  });

  it('answers 403 for system and organization tags, and for a viewer', async () => {
    const p = await tagPeople();
    const system = await createTagRow({ organizationId: p.organizationId, type: 'system', name: 'System' });
    const org = await createTagRow({
      organizationId: p.organizationId,
      type: 'organization',
      name: 'Org',
      side: 'org',
    });
    const tag = await createTagAs(p.owner, p.caseId, { name: 'Hot' });
    expectError(await remove(p.owner, p.caseId, system.id), 403, 'FORBIDDEN');
    expectError(await remove(p.opposing, p.caseId, system.id), 403, 'FORBIDDEN');
    expectError(await remove(p.owner, p.caseId, org.id), 403, 'FORBIDDEN');
    expectError(await remove(p.viewer, p.caseId, tag.id), 403, 'INSUFFICIENT_ROLE');
    for (const row of [system, org, tag]) expect((await tagRow(row.id)).isActive).toBe(true);
  });

  it("records opposing counsel's deletion without naming the tag, and hides it from their list", async () => {
    const p = await tagPeople();
    const tag = await createTagAs(p.opposing, p.caseId, { name: 'Smoking Gun' });
    const { result, events } = await invokeAudited(routes.deleteCaseTag, {
      token: p.opposing.accessToken,
      path: { caseId: p.caseId, tagId: tag.id },
    });
    expectData(result);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      action: 'review.tag.deactivated',
      targetId: null,
      metadata: { type: 'case', side: 'opposing_council', keys: ['name', 'side', 'tagId', 'type'] },
    });
    expect(JSON.stringify(events)).not.toMatch(/gun/i);
    expect(JSON.stringify(events)).not.toContain(tag.id);
    expect(await namesListed(p.opposing, p.caseId)).toEqual([]);
    expect(await namesListed(p.opposing, p.caseId, true)).toEqual(['Smoking Gun']);
  });
});

describeSecurity(routes.deleteCaseTag, {
  request: async ({ caseId, organizationId, user }) => {
    const tag = await createTagRow({
      organizationId,
      caseId,
      type: 'case',
      name: 'Doomed',
      side: 'org',
      createdById: user.id,
    });
    return { path: { caseId, tagId: tag.id } };
  },
  succeeds: true,
  everyToken: true,
  unchanged: async (_actor, request) => {
    expect((await tagRow(request.path!.tagId!)).isActive).toBe(true);
  },
});
