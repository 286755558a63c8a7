import { and, count, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { networkConversations, networkConversationTags, networkMessages, tags } from '../../lib/db/schema';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { createProfile, createTag } from '../harness/material';
import { describeSecurity } from '../harness/security';

async function networkScenario() {
  const s = await caseWithOwner();
  const visible = await createProfile(s.caseId, 'professional_network', 'Ann Lee', true);
  const hidden = await createProfile(s.caseId, 'professional_network', 'Bob Roe', false);
  const contract = await createTag(s.organizationId, s.caseId, 'Contract');
  const urgent = await createTag(s.organizationId, s.caseId, 'Urgent');
  const conversation = async (profileId: string, title: string, tagIds: string[]) => {
    const [row] = await db()
      .insert(networkConversations)
      .values({ caseId: s.caseId, profileId, externalId: title, title, participants: ['Ann Lee', 'Bob Roe'] })
      .returning();
    for (const tagId of tagIds)
      await db().insert(networkConversationTags).values({ conversationId: row!.id, tagId, addedBy: 'user' });
    return row!;
  };
  const both = await conversation(visible.id, 'Both tags', [contract.id, urgent.id]);
  const one = await conversation(visible.id, 'One tag', [contract.id]);
  const secret = await conversation(hidden.id, 'Hidden profile', [contract.id, urgent.id]);
  const message = (conversationId: string, profileId: string, day: number, subject: string | null, content: string) =>
    db()
      .insert(networkMessages)
      .values({
        caseId: s.caseId,
        conversationId,
        profileId,
        externalId: `${conversationId}-${day}`,
        from: 'Ann Lee',
        to: 'Bob Roe',
        date: new Date(Date.UTC(2026, 9, day)),
        subject,
        content,
      });
  await message(both.id, visible.id, 1, 'Contract draft', 'Please review the attached draft');
  await message(both.id, visible.id, 3, null, 'The contracting parties agreed');
  await message(one.id, visible.id, 2, null, 'Lunch on Friday? contract talk');
  await message(secret.id, hidden.id, 4, null, 'Contract with the witness');
  const search = (query: Record<string, string>, token = s.owner.accessToken) =>
    invoke(routes.searchNetworkMessages, { token, path: { caseId: s.caseId }, query });
  return { ...s, visible, hidden, contract, urgent, search };
}

describe('GET /professional-network/{caseId}/search-messages', () => {
  it('finds words by prefix in subject and content across conversations, newest first, with title and participants', async () => {
    const s = await networkScenario();
    const page = expectData(await s.search({ searchText: 'contract' }));
    expect(page.total).toBe(4);
    expect(page.data.map((m: { date: string }) => m.date.slice(0, 10))).toEqual([
      '2026-10-04',
      '2026-10-03',
      '2026-10-02',
      '2026-10-01',
    ]);
    expect(page.data[3]).toMatchObject({
      subject: 'Contract draft',
      conversationTitle: 'Both tags',
      participants: ['Ann Lee', 'Bob Roe'],
      profileId: s.visible.id,
      isDraft: false,
    });
    expect(expectData(await s.search({ searchText: 'review DRAFT' })).total).toBe(1);
    expect(expectData(await s.search({ searchText: 'nothing-like-this' }))).toMatchObject({ total: 0, data: [] });
  });

  it('keeps only conversations carrying all the given tags, and pages', async () => {
    const s = await networkScenario();
    const tagged = expectData(await s.search({ searchText: 'contract', tags: `${s.contract.id},${s.urgent.id}` }));
    expect(tagged.data.map((m: { conversationTitle: string }) => m.conversationTitle)).toEqual([
      'Hidden profile',
      'Both tags',
      'Both tags',
    ]);
    // The same id twice (another letter case) is still one tag, not a second one no conversation carries.
    const repeated = expectData(
      await s.search({ searchText: 'contract', tags: `${s.urgent.id},${s.urgent.id.toUpperCase()}` }),
    );
    expect(repeated.total).toBe(3);
    const paged = expectData(await s.search({ searchText: 'contract', tags: s.contract.id, perPage: '2', page: '2' }));
    expect(paged).toMatchObject({ total: 4, page: 2, totalPages: 2, previousPage: 1, nextPage: null });
    expect(paged.data).toHaveLength(2);
    // Past the last page: no records, the total still counted.
    const past = expectData(await s.search({ searchText: 'contract', perPage: '2', page: '9' }));
    expect(past).toMatchObject({ total: 4, page: 9, totalPages: 2, data: [] });
  });

  it("counts only active links of tags the caller's side may see", async () => {
    const s = await networkScenario();
    const opposing = await memberWithAccess(s.organizationId, s.caseId, 'opposing_counsel', 'client');
    const [theirs] = await db()
      .insert(tags)
      .values({
        organizationId: s.organizationId,
        caseId: s.caseId,
        name: 'Their theory',
        nameLowercase: 'their theory',
        creatorAccessType: 'opposing_council',
        createdById: opposing.id,
      })
      .returning();
    const conversations = await db()
      .select()
      .from(networkConversations)
      .where(eq(networkConversations.caseId, s.caseId));
    const byTitle = (title: string) => conversations.find((c) => c.title === title)!;
    await db()
      .insert(networkConversationTags)
      .values([
        { conversationId: byTitle('One tag').id, tagId: theirs!.id, addedBy: 'user', addedById: opposing.id },
        { conversationId: byTitle('Both tags').id, tagId: theirs!.id, addedBy: 'user', addedById: opposing.id },
      ]);
    const titles = async (query: Record<string, string>, token?: string) =>
      expectData(await s.search({ searchText: 'contract', ...query }, token)).data.map(
        (m: { conversationTitle: string }) => m.conversationTitle,
      );
    // The firm: the other side's tag matches nothing, alone or with the firm's own.
    expect(await titles({ tags: theirs!.id })).toEqual([]);
    expect(await titles({ tags: `${s.contract.id},${theirs!.id}` })).toEqual([]);
    // Opposing counsel: their own tag matches, the firm's tags match nothing.
    expect(await titles({ tags: theirs!.id }, opposing.accessToken)).toEqual(['Both tags', 'One tag', 'Both tags']);
    expect(await titles({ tags: s.contract.id }, opposing.accessToken)).toEqual([]);
    // A removed link no longer carries its tag.
    await db()
      .update(networkConversationTags)
      .set({ removedAt: new Date(), removedBy: 'user' })
      .where(eq(networkConversationTags.conversationId, byTitle('One tag').id));
    expect(await titles({ tags: s.contract.id })).toEqual(['Hidden profile', 'Both tags', 'Both tags']);
  });

  it('matches what a prefix query matches, however many lexemes a word starts and whatever they hold', async () => {
    const s = await networkScenario();
    const [conversation] = await db()
      .select()
      .from(networkConversations)
      .where(eq(networkConversations.caseId, s.caseId))
      .limit(1);
    const zetas = Array.from({ length: 60 }, (_, i) => `zeta${i} ${i}12`).join(' ');
    for (const [n, content] of [`Link http://a.example/o'k?x=1 now`, zetas, 'Zetas and alphas'].entries())
      await db()
        .insert(networkMessages)
        .values({
          caseId: s.caseId,
          conversationId: conversation!.id,
          profileId: conversation!.profileId,
          externalId: `extra-${n}`,
          from: 'Ann Lee',
          to: 'Bob Roe',
          date: new Date(Date.UTC(2026, 9, 10 + n)),
          content,
        });
    for (const searchText of [
      'a',
      'a example',
      'zeta',
      'zeta1',
      'zeta59 zetas',
      'contract',
      'contracting',
      'nothing',
      '1',
      '12 a',
      'o k',
    ]) {
      const words = searchText.split(' ').map((w) => `${w}:*`);
      const [expected] = await db()
        .select({ total: count() })
        .from(networkMessages)
        .where(
          and(
            eq(networkMessages.caseId, s.caseId),
            sql`${networkMessages.search} @@ to_tsquery('simple', ${words.join(' & ')})`,
          ),
        );
      expect([searchText, expectData(await s.search({ searchText })).total]).toEqual([searchText, expected!.total]);
    }
    expect(expectData(await s.search({ searchText: 'a' })).total).toBeGreaterThanOrEqual(3);
    expect(expectData(await s.search({ searchText: 'zeta' })).total).toBe(2);
  });

  it('excludes messages of profiles opposing counsel may not see', async () => {
    const s = await networkScenario();
    const opposing = await memberWithAccess(s.organizationId, s.caseId, 'opposing_counsel', 'client');
    const page = expectData(await s.search({ searchText: 'contract' }, opposing.accessToken));
    expect(page.total).toBe(3);
    expect(page.data.every((m: { profileId: string }) => m.profileId === s.visible.id)).toBe(true);
    const profiles = expectData(
      await invoke(routes.listNetworkProfiles, { token: opposing.accessToken, path: { caseId: s.caseId } }),
    );
    expect(profiles.data.map((p: { name: string }) => p.name)).toEqual(['Ann Lee']);
  });

  it.each([
    [{}, 'query.searchText'],
    [{ searchText: '' }, 'query.searchText'],
    [{ searchText: 'x', tags: 't'.repeat(201) }, 'query.tags.0'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const s = await networkScenario();
    expectError(await s.search(query as Record<string, string>), 400, 'VALIDATION_FAILED', [field]);
  });

  it('refuses a user of another organization and an unknown case', async () => {
    const s = await networkScenario();
    const stranger = await createUser();
    const refused = await s.search({ searchText: 'contract' }, stranger.accessToken);
    expectError(refused, 403, 'INSUFFICIENT_ROLE');
    expect(JSON.stringify(refused.body)).not.toContain('Contract draft');
    expectError(
      await invoke(routes.searchNetworkMessages, {
        token: s.owner.accessToken,
        path: { caseId: '01a2028b-8234-78ea-a301-3af91dee41ca' },
        query: { searchText: 'x' },
      }),
      404,
      'NOT_FOUND',
    );
  });
});

describeSecurity(routes.searchNetworkMessages, {
  request: ({ caseId }) => ({ path: { caseId }, query: { searchText: 'contract' } }),
  succeeds: true,
});
