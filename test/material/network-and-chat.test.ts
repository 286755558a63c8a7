import { and, count, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { networkConversations, networkConversationTags, networkMessages, supportTickets } from '../../lib/db/schema';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { caseWithOwner, createProfile, createTag, memberWithAccess } from './material-helpers';
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
    for (const tagId of tagIds) await db().insert(networkConversationTags).values({ conversationId: row!.id, tagId });
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

describe('GET /chat-platform/{caseId}/profile/{chatPlatformId}/support-tickets', () => {
  async function chatScenario() {
    const s = await caseWithOwner();
    const visible = await createProfile(s.caseId, 'chat_platform', 'ann#1', true);
    const hidden = await createProfile(s.caseId, 'chat_platform', 'bob#2', false);
    await db()
      .insert(supportTickets)
      .values([
        {
          caseId: s.caseId,
          profileId: visible.id,
          ticketId: 1,
          subject: 'Account locked',
          status: 'closed',
          ticketCreatedAt: new Date('2026-09-01T00:00:00Z'),
          comments: [
            { author: 'agent', comment: 'We sent a password reset\nlink by email', createdAt: '2026-09-01T01:00:00Z' },
          ],
        },
        {
          caseId: s.caseId,
          profileId: visible.id,
          ticketId: 2,
          subject: 'Billing question',
          status: null,
          ticketCreatedAt: new Date('2026-09-05T00:00:00Z'),
          // As exports carry them: a time without zone designator, and none at all.
          comments: [
            { author: 'ann', comment: 'Charged twice', createdAt: '2026-09-05 10:00:00 UTC' },
            { author: 'agent', comment: 'Refunded', createdAt: '' },
          ],
        },
        {
          caseId: s.caseId,
          profileId: hidden.id,
          ticketId: 3,
          subject: 'Hidden',
          status: 'open',
          ticketCreatedAt: null,
          comments: [],
        },
      ]);
    const tickets = (profileId: string, query: Record<string, string> = {}, token = s.owner.accessToken) =>
      invoke(routes.listSupportTickets, { token, path: { caseId: s.caseId, chatPlatformId: profileId }, query });
    return { ...s, visible, hidden, tickets };
  }

  it('lists the profile tickets with comments, oldest first (common paging default), and searches subject and comments', async () => {
    const s = await chatScenario();
    const page = expectData(await s.tickets(s.visible.id));
    expect(page.data.map((t: { ticketId: number }) => t.ticketId)).toEqual([1, 2]);
    expect(page.data[0]).toMatchObject({
      chatUserProvider: s.visible.id,
      subject: 'Account locked',
      comments: [expect.objectContaining({ author: 'agent' })],
    });
    // Comment times are date-times as the contract types them (the ticket's time when a comment has none).
    expect(page.data[0].comments[0].createdAt).toBe('2026-09-01T01:00:00.000Z');
    expect(page.data[1].comments).toEqual([
      { author: 'ann', comment: 'Charged twice', createdAt: '2026-09-05T10:00:00.000Z' },
      { author: 'agent', comment: 'Refunded', createdAt: '2026-09-05T00:00:00.000Z' },
    ]);
    expect(
      expectData(await s.tickets(s.visible.id, { searchText: 'password' })).data.map(
        (t: { ticketId: number }) => t.ticketId,
      ),
    ).toEqual([1]);
    // A word after a line break inside a comment is found like any other.
    expect(
      expectData(await s.tickets(s.visible.id, { searchText: 'link' })).data.map(
        (t: { ticketId: number }) => t.ticketId,
      ),
    ).toEqual([1]);
    expect(
      expectData(await s.tickets(s.visible.id, { searchText: 'billing' })).data.map(
        (t: { ticketId: number }) => t.ticketId,
      ),
    ).toEqual([2]);
    expect(expectData(await s.tickets(s.visible.id, { perPage: '1', page: '2' }))).toMatchObject({
      total: 2,
      page: 2,
      data: [expect.objectContaining({ ticketId: 2 })],
    });
  });

  it('gives opposing counsel an empty page for a profile they may not see', async () => {
    const s = await chatScenario();
    const opposing = await memberWithAccess(s.organizationId, s.caseId, 'opposing_counsel', 'client');
    expect(expectData(await s.tickets(s.hidden.id, {}, opposing.accessToken))).toMatchObject({ total: 0, data: [] });
    expect(expectData(await s.tickets(s.visible.id, {}, opposing.accessToken)).total).toBe(2);
    expect(expectData(await s.tickets(s.hidden.id)).total).toBe(1);
  });

  it('answers 404 for a profile of another case and 403 for another organization', async () => {
    const s = await chatScenario();
    const other = await caseWithOwner();
    const foreign = await createProfile(other.caseId, 'chat_platform', 'x#3', true);
    expectError(await s.tickets(foreign.id), 404, 'NOT_FOUND');
    expectError(await s.tickets(s.visible.id, {}, other.owner.accessToken), 403, 'INSUFFICIENT_ROLE');
  });
});

describeSecurity(routes.searchNetworkMessages, {
  request: ({ caseId }) => ({ path: { caseId }, query: { searchText: 'contract' } }),
  succeeds: true,
});

describeSecurity(routes.listNetworkProfiles, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });

describeSecurity(routes.listChatProfiles, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });

describeSecurity(routes.listSupportTickets, {
  request: async ({ caseId }) => ({
    path: { caseId, chatPlatformId: (await createProfile(caseId, 'chat_platform', 'Cid Chat', true)).id },
  }),
  succeeds: true,
});
