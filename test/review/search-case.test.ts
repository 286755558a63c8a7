import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { rawRows } from '../../lib/db/raw-rows';
import { CaseSearchQueryError, searchMatchSql, searchTaggableItemsSql, toCaseSearch } from '../../lib/review';
import {
  deviceNotes,
  devices,
  emails,
  emailTags,
  emailThreads,
  networkConversations,
  networkConversationTags,
  networkMessages,
  supportTickets,
} from '../../lib/db/schema';
import { createUser } from '../harness/actors';
import { invokeAudited } from '../harness/audit';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { UNKNOWN_ID } from '../harness/ids';
import { expectData, expectError, invoke } from '../harness/invoke';
import { createProfile, createTag } from '../harness/material';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';
import { createTagRow } from '../harness/tags';

const day = (d: number) => new Date(Date.UTC(2026, 9, d, 12));

interface Result {
  kind: string;
  id: string;
  threadId?: string;
  conversationId?: string;
  profileId?: string;
  deviceId?: string;
  title: string | null;
  snippet: { text: string; highlights: Array<{ start: number; end: number }> };
  date: string | null;
  participants: string[];
  tags: Array<{ id: string; name: string }>;
}

const marked = (r: Result) => r.snippet.highlights.map((h) => r.snippet.text.slice(h.start, h.end));

/** Evidence of every kind mentioning a merger, tags of both sides on some of it. */
async function scenario() {
  const s = await caseWithOwner();
  const opposing = await memberWithAccess(s.organizationId, s.caseId, 'opposing_counsel', 'client');
  const viewer = await memberWithAccess(s.organizationId, s.caseId, 'viewer');
  const hot = await createTag(s.organizationId, s.caseId, 'Hot');
  const privileged = await createTag(s.organizationId, s.caseId, 'Privileged');
  const theirs = await createTagRow({
    organizationId: s.organizationId,
    caseId: s.caseId,
    type: 'case',
    name: 'Their pick',
    side: 'opposing_council',
    createdById: opposing.id,
  });
  const [thread] = await db()
    .insert(emailThreads)
    .values({ caseId: s.caseId, rootMessageId: `<${randomBytes(6).toString('hex')}@t>`, subject: 'Merger' })
    .returning();
  const email = async (
    subject: string,
    body: string,
    date: Date,
    from: { name?: string; email: string },
    to: string[],
  ) => {
    const addresses = [from.email, ...to];
    const [row] = await db()
      .insert(emails)
      .values({
        caseId: s.caseId,
        threadId: thread!.id,
        grantId: 'seed',
        externalId: `<${randomBytes(6).toString('hex')}@seed>`,
        sourceEmail: 'ann@lee.example',
        subject,
        body,
        date,
        from: [from],
        to: to.map((e) => ({ email: e })),
        participantEmails: addresses,
        participantDomains: [...new Set(addresses.map((a) => a.split('@')[1]!))],
      })
      .returning();
    return row!;
  };
  const e1 = await email(
    'Merger terms',
    'The merger agreement was signed by Ann.',
    day(1),
    { name: 'Ann Lee', email: 'ann@lee.example' },
    ['bob@roe.example'],
  );
  const e2 = await email('Lunch', 'No merger talk at lunch', day(5), { email: 'carl@court.example' }, [
    'ann@lee.example',
  ]);
  const e3 = await email('Draft', 'merger draft attached', day(3), { email: 'dana@court.example' }, [
    'bob@roe.example',
  ]);
  await db()
    .insert(emailTags)
    .values([
      { emailId: e1.id, tagId: hot.id, addedBy: 'user' },
      { emailId: e1.id, tagId: theirs.id, addedBy: 'user' },
      // Removed: no longer on the email.
      { emailId: e3.id, tagId: privileged.id, addedBy: 'user', removedAt: new Date(), removedBy: 'user' },
    ]);

  const shown = await createProfile(s.caseId, 'professional_network', 'Ann Lee', true);
  const hidden = await createProfile(s.caseId, 'professional_network', 'Zed Hid', false);
  const conversation = async (profileId: string, title: string) =>
    (
      await db()
        .insert(networkConversations)
        .values({ caseId: s.caseId, profileId, externalId: title, title, participants: ['Ann Lee', 'Bob Roe'] })
        .returning()
    )[0]!;
  const deal = await conversation(shown.id, 'Deal chat');
  const secret = await conversation(hidden.id, 'Secret chat');
  await db().insert(networkConversationTags).values({ conversationId: deal.id, tagId: hot.id, addedBy: 'user' });
  const message = async (conversationId: string, profileId: string, date: Date, content: string) =>
    (
      await db()
        .insert(networkMessages)
        .values({
          caseId: s.caseId,
          conversationId,
          profileId,
          externalId: randomBytes(6).toString('hex'),
          from: 'Ann Lee',
          to: 'Bob Roe',
          date,
          content,
        })
        .returning()
    )[0]!;
  const n1 = await message(deal.id, shown.id, day(2), 'Merger closing next week');
  const n2 = await message(secret.id, hidden.id, day(4), 'secret merger plan');

  const chatShown = await createProfile(s.caseId, 'chat_platform', 'Erin', true);
  const chatHidden = await createProfile(s.caseId, 'chat_platform', 'Hal', false);
  const ticket = async (profileId: string, ticketId: number, subject: string, date: Date, comment: string) =>
    (
      await db()
        .insert(supportTickets)
        .values({
          caseId: s.caseId,
          profileId,
          ticketId,
          subject,
          ticketCreatedAt: date,
          comments: [{ author: 'Erin Poe', comment, createdAt: date.toISOString() }],
        })
        .returning()
    )[0]!;
  const t1 = await ticket(chatShown.id, 1, 'Refund', day(6), 'Ask about the merger refund');
  const t2 = await ticket(chatHidden.id, 2, 'Hidden', day(7), 'merger rumours');

  const [device] = await db()
    .insert(devices)
    .values({ organizationId: s.organizationId, deviceId: `dev-${randomBytes(4).toString('hex')}`, deviceType: 'ios' })
    .returning();
  const [d1] = await db()
    .insert(deviceNotes)
    .values({
      caseId: s.caseId,
      deviceId: device!.id,
      noteId: 1,
      title: 'Memo',
      htmlContent: '<p>Merger &amp; acquisition <b>memo</b></p>',
    })
    .returning();

  const search = (query: Record<string, string>, token = s.owner.accessToken) =>
    invoke(routes.searchCase, { token, path: { caseId: s.caseId }, query });
  const found = async (query: Record<string, string>, token?: string) =>
    expectData(await search({ perPage: '100', ...query }, token)) as { total: number; data: Result[] } & Record<
      string,
      any
    >;
  const ids = async (query: Record<string, string>, token?: string) =>
    (await found(query, token)).data.map((r) => r.id).sort();
  return {
    ...s,
    opposing,
    viewer,
    hot,
    privileged,
    theirs,
    thread: thread!,
    e1,
    e2,
    e3,
    n1,
    n2,
    t1,
    t2,
    d1: d1!,
    device: device!,
    deal,
    shown,
    chatShown,
    search,
    found,
    ids,
  };
}

const sorted = (...values: string[]) => [...values].sort();

describe('GET /cases/{caseId}/search', () => {
  it('finds every kind with the ids to open it, a title, participants and highlights at the right ranges', async () => {
    const s = await scenario();
    const page = await s.found({ q: 'merger' });
    expect(page.total).toBe(8);
    const byId = new Map(page.data.map((r) => [r.id, r]));
    expect(byId.get(s.e2.id)).toMatchObject({
      kind: 'email',
      threadId: s.thread.id,
      title: 'Lunch',
      snippet: { text: 'No merger talk at lunch', highlights: [{ start: 3, end: 9 }] },
      date: day(5).toISOString(),
      participants: ['carl@court.example', 'ann@lee.example'],
    });
    expect(byId.get(s.n1.id)).toMatchObject({
      kind: 'network-message',
      conversationId: s.deal.id,
      profileId: s.shown.id,
      title: 'Deal chat',
      snippet: { text: 'Merger closing next week', highlights: [{ start: 0, end: 6 }] },
      participants: ['Ann Lee', 'Bob Roe'],
    });
    expect(byId.get(s.t1.id)).toMatchObject({
      kind: 'support-ticket',
      profileId: s.chatShown.id,
      title: 'Refund',
      snippet: { text: 'Ask about the merger refund', highlights: [{ start: 14, end: 20 }] },
      participants: ['Erin Poe'],
      date: day(6).toISOString(),
    });
    // A note's HTML is reduced to text: no tags, entities read, ranges into that text.
    expect(byId.get(s.d1.id)).toMatchObject({
      kind: 'device-note',
      deviceId: s.device.id,
      title: 'Memo',
      snippet: { text: 'Merger & acquisition memo', highlights: [{ start: 0, end: 6 }] },
      participants: [],
    });
    for (const r of page.data) {
      expect(marked(r).map((m) => m.toLowerCase())).toContain('merger');
      expect(r.snippet.text).not.toMatch(/[<>\uE000\uE001]|&amp;/);
    }
    expect(byId.get(s.e1.id)!.threadId).toBe(s.thread.id);
    expect(byId.get(s.e1.id)!.conversationId).toBeUndefined();
  });

  it('cuts a long text to fragments around the matches, ranges into the fragments', async () => {
    const s = await scenario();
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');
    await db()
      .insert(emails)
      .values({
        caseId: s.caseId,
        threadId: s.thread.id,
        grantId: 'seed',
        externalId: '<long@seed>',
        sourceEmail: 'ann@lee.example',
        subject: 'Long',
        body: `${filler(200)} the zebra crossing\n\n${filler(300)} another zebra here ${filler(100)}`,
        date: day(9),
      });
    const [long] = (await s.found({ q: 'zebra' })).data;
    expect(long!.snippet.text.length).toBeLessThan(400);
    expect(long!.snippet.text).toContain(' … ');
    expect(long!.snippet.text).not.toContain('\n');
    expect(marked(long!)).toEqual(['zebra', 'zebra']);
  });

  it('reads words, "phrases", -exclusions and prefix*', async () => {
    const s = await scenario();
    expect(await s.ids({ q: 'agreement' })).toEqual([s.e1.id]);
    // Whole words only: a word start is not the word.
    expect(await s.ids({ q: 'merg' })).toEqual([]);
    expect((await s.found({ q: 'MERG*' })).total).toBe(8);
    // Every word must match, anywhere in the item.
    expect(await s.ids({ q: 'merger lunch' })).toEqual([s.e2.id]);
    // A phrase: the words adjacent, in order.
    expect(await s.ids({ q: '"merger agreement"' })).toEqual([s.e1.id]);
    expect(await s.ids({ q: '"agreement merger"' })).toEqual([]);
    const highlighted = (await s.found({ q: '"merger agreement"' })).data[0]!;
    expect(marked(highlighted)).toEqual(['merger', 'agreement']);
    // Exclusions: a word, a phrase.
    expect((await s.ids({ q: 'merger -lunch -secret -rumours' })).length).toBe(5);
    expect(await s.ids({ q: 'merger -"no merger" -lunch' })).not.toContain(s.e2.id);
    expect(await s.ids({ q: 'merger -"merger lunch"' })).toContain(s.e2.id);
    // What looks like tsquery syntax is only text.
    expect(await s.ids({ q: "merger & !agreement | (x) 'y" })).toEqual([]);
    expect((await s.found({ q: 'merger (draft)' })).data.map((r) => r.id)).toEqual([s.e3.id]);
  });

  it('counts facets over the whole match, not the page, and pages with an exact total', async () => {
    const s = await scenario();
    const page = await s.found({ q: 'merger', perPage: '3', page: '2' });
    expect(page).toMatchObject({ total: 8, page: 2, perPage: 3, totalPages: 3, nextPage: 3, previousPage: 1 });
    expect(page.data).toHaveLength(3);
    expect(page.facets.kinds).toEqual([
      { kind: 'email', count: 3 },
      { kind: 'network-message', count: 2 },
      { kind: 'support-ticket', count: 2 },
      { kind: 'device-note', count: 1 },
    ]);
    // The firm's tags only: Hot on an email and on a conversation (its message carries it); a removed link counts not.
    expect(page.facets.tags).toEqual([{ tagId: s.hot.id, name: 'Hot', count: 2 }]);
    expect(page.facets.participantDomains).toEqual([
      { domain: 'court.example', count: 2 },
      { domain: 'lee.example', count: 2 },
      { domain: 'roe.example', count: 2 },
    ]);
    const all = new Set<string>();
    for (const n of [1, 2, 3])
      for (const r of (await s.found({ q: 'merger', perPage: '3', page: `${n}` })).data) all.add(r.id);
    expect(all.size).toBe(8);
    const skipped = await s.found({ q: 'merger', skip: '6', limit: '5' });
    expect(skipped).toMatchObject({ total: 8, skip: 6, limit: 5, nextPage: null });
    expect(skipped.data).toHaveLength(2);
    const past = await s.found({ q: 'merger', perPage: '5', page: '9' });
    expect(past).toMatchObject({ total: 8, data: [] });
    expect(past.facets.kinds).toHaveLength(4);
    const none = await s.found({ q: 'nothingmatches' });
    expect(none).toMatchObject({ total: 0, data: [], facets: { kinds: [], tags: [], participantDomains: [] } });
  });

  it('sorts by relevance (ties newest first) or by date, either order', async () => {
    const s = await scenario();
    // "merger" twice in e1 (subject and body): the most relevant; the rest rank alike, newest first.
    const relevance = (await s.found({ q: 'merger' })).data.map((r) => r.id);
    expect(relevance[0]).toBe(s.e1.id);
    const byDate = (await s.found({ q: 'merger', sortBy: 'date' })).data.map((r) => r.id);
    // The note's date is its import time (now), after every October date.
    expect(byDate).toEqual([s.d1.id, s.t2.id, s.t1.id, s.e2.id, s.n2.id, s.e3.id, s.n1.id, s.e1.id]);
    const ascending = (await s.found({ q: 'merger', sortBy: 'date', sortOrder: 'asc' })).data.map((r) => r.id);
    expect(ascending).toEqual([...byDate].reverse());
    expect((await s.found({ q: 'merger', sortOrder: 'asc' })).data.at(-1)!.id).toBe(s.e1.id);
  });

  it('filters by kinds, from/to and participants', async () => {
    const s = await scenario();
    expect(await s.ids({ q: 'merger', kinds: 'support-ticket,device-note' })).toEqual(
      sorted(s.t1.id, s.t2.id, s.d1.id),
    );
    expect(await s.ids({ q: 'merger', from: day(2).toISOString(), to: '2026-10-04T23:59:59+00:00' })).toEqual(
      sorted(s.n1.id, s.e3.id, s.n2.id),
    );
    expect(await s.ids({ q: 'merger', participants: 'ann@lee.example' })).toEqual(sorted(s.e1.id, s.e2.id));
    // Names: an email's from/to names, a message's sender or conversation, a ticket's comment authors.
    expect(await s.ids({ q: 'merger', participants: 'ann lee' })).toEqual(sorted(s.e1.id, s.n1.id, s.n2.id));
    expect(await s.ids({ q: 'merger', participants: 'Erin Poe,carl@court.example' })).toEqual(
      sorted(s.t1.id, s.t2.id, s.e2.id),
    );
  });

  it("filters by the caller side's tags only: the other side's tag matches nothing and never shows", async () => {
    const s = await scenario();
    expect(await s.ids({ q: 'merger', tags: s.hot.id })).toEqual(sorted(s.e1.id, s.n1.id));
    expect(await s.ids({ q: 'merger', tags: s.hot.id.toUpperCase() })).toEqual(sorted(s.e1.id, s.n1.id));
    expect(await s.ids({ q: 'merger', tags: s.theirs.id })).toEqual([]);
    expect(await s.ids({ q: 'merger', tags: `${s.hot.id},${s.theirs.id}` })).toEqual([]);
    expect(await s.ids({ q: 'merger', tags: 'not-a-uuid' })).toEqual([]);
    expect(await s.ids({ q: 'merger', tags: s.privileged.id })).toEqual([]);
    expect((await s.ids({ q: 'merger', excludeTags: s.hot.id })).length).toBe(6);
    expect((await s.ids({ q: 'merger', excludeTags: s.theirs.id })).length).toBe(8);
    expect(await s.ids({ q: 'merger', untagged: 'true' })).not.toContain(s.e1.id);
    expect((await s.ids({ q: 'merger', untagged: 'true', tags: s.hot.id })).length).toBe(6);
    const firm = await s.found({ q: 'agreement' });
    expect(firm.data[0]!.tags.map((t) => t.name)).toEqual(['Hot']);
    expect(JSON.stringify(firm)).not.toContain('Their pick');

    const theirs = await s.found({ q: 'merger' }, s.opposing.accessToken);
    expect(theirs.facets.tags).toEqual([{ tagId: s.theirs.id, name: 'Their pick', count: 1 }]);
    expect(theirs.data.find((r) => r.id === s.e1.id)!.tags.map((t) => t.name)).toEqual(['Their pick']);
    expect(JSON.stringify(theirs)).not.toContain('Hot');
    expect(await s.ids({ q: 'merger', tags: s.theirs.id }, s.opposing.accessToken)).toEqual([s.e1.id]);
    expect(await s.ids({ q: 'merger', tags: s.hot.id }, s.opposing.accessToken)).toEqual([]);
    // The firm's Hot on n1 is not theirs: n1 is untagged to them.
    expect(await s.ids({ q: 'merger', untagged: '1' }, s.opposing.accessToken)).toEqual(
      sorted(s.e2.id, s.e3.id, s.n1.id, s.t1.id),
    );
  });

  it("shows opposing counsel every email, visible profiles' messages and tickets, and no device notes", async () => {
    const s = await scenario();
    const page = await s.found({ q: 'merger' }, s.opposing.accessToken);
    expect(page.data.map((r) => r.id).sort()).toEqual(sorted(s.e1.id, s.e2.id, s.e3.id, s.n1.id, s.t1.id));
    expect(page.facets.kinds).toEqual([
      { kind: 'email', count: 3 },
      { kind: 'network-message', count: 1 },
      { kind: 'support-ticket', count: 1 },
    ]);
    expect(JSON.stringify(page)).not.toMatch(/secret|rumours|Memo/i);
    expect((await s.found({ q: 'merger', kinds: 'device-note' }, s.opposing.accessToken)).total).toBe(0);
    // A viewer reads what the firm reads.
    expect((await s.found({ q: 'merger' }, s.viewer.accessToken)).total).toBe(8);
  });

  it('yields the SQL of every match for tagging by search, as the viewer may see it', async () => {
    const s = await scenario();
    const firm = { organizationId: s.organizationId, caseId: s.caseId, side: 'org' as const, userId: s.owner.id };
    const theirs = { ...firm, side: 'opposing_council' as const, userId: s.opposing.id };
    const search = toCaseSearch({ q: 'merger', excludeTags: [s.hot.id] });
    const matches = await rawRows<{ kind: string; id: string }>(db(), searchMatchSql(firm, search));
    expect(matches.map((m) => `${m.kind}:${m.id}`).sort()).toEqual(
      [
        `email:${s.e2.id}`,
        `email:${s.e3.id}`,
        `network-message:${s.n2.id}`,
        `support-ticket:${s.t1.id}`,
        `support-ticket:${s.t2.id}`,
        `device-note:${s.d1.id}`,
      ].sort(),
    );
    const items = await rawRows<{ kind: string; id: string }>(
      db(),
      searchTaggableItemsSql(theirs, toCaseSearch({ q: 'merger' })),
    );
    expect(items.map((m) => `${m.kind}:${m.id}`).sort()).toEqual(
      [
        `email:${s.e1.id}`,
        `email:${s.e2.id}`,
        `email:${s.e3.id}`,
        `network-conversation:${s.deal.id}`,
        `support-ticket:${s.t1.id}`,
      ].sort(),
    );
    expect(() => toCaseSearch({ q: '-only' })).toThrow(CaseSearchQueryError);
    expect(() => toCaseSearch({ q: 'x', from: '2026-10-02T00:00:00Z', to: '2026-10-01T00:00:00Z' })).toThrow(
      CaseSearchQueryError,
    );
  });

  it('runs a fixed number of statements whatever it finds', async () => {
    const s = await scenario();
    const few = await countQueries(() => s.search({ q: 'agreement' }));
    const many = await countQueries(() => s.search({ q: 'merger' }));
    expect(expectData(many.result).total).toBe(8);
    expect(many.queries).toBe(few.queries);
  });

  it.each([
    [{ q: '' }, 'query.q'],
    [{ q: 'a'.repeat(201) }, 'query.q'],
    [{ q: '-draft -"lunch talk"' }, 'query.q'],
    [{ q: '***' }, 'query.q'],
    [{ q: 'x', from: '2026-10-05T00:00:00Z', to: '2026-10-04T00:00:00Z' }, 'query.from'],
    [{ q: 'x', from: 'yesterday' }, 'query.from'],
    [{ q: 'x', kinds: 'email,fax' }, 'query.kinds.1'],
    [{ q: 'x', sortBy: 'size' }, 'query.sortBy'],
    [{ q: 'x', tags: UNKNOWN_ID, excludeTags: UNKNOWN_ID }, 'query.excludeTags'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const s = await scenario();
    expectError(await s.search(query as Record<string, string>), 400, 'VALIDATION_FAILED', [field]);
  });

  it('accepts 200 characters', async () => {
    const s = await scenario();
    expect((await s.found({ q: `merger ${'a'.repeat(193)}` })).total).toBe(0);
  });

  it("records each search as an evidence read; opposing counsel's query only as keys and a hash", async () => {
    const s = await scenario();
    const firm = await invokeAudited(routes.searchCase, {
      token: s.owner.accessToken,
      path: { caseId: s.caseId },
      query: { q: 'merger -lunch', kinds: 'email' },
    });
    expect(firm.result.status).toBe(200);
    expect(firm.events.map((e) => e.action)).toEqual(['evidence.case.searched']);
    expect(firm.events[0]).toMatchObject({ caseId: s.caseId });
    expect(firm.events[0]!.metadata).toMatchObject({ query: { q: 'merger -lunch', kinds: ['email'] } });
    const theirs = await invokeAudited(routes.searchCase, {
      token: s.opposing.accessToken,
      path: { caseId: s.caseId },
      query: { q: 'merger -lunch', tags: s.theirs.id },
    });
    expect(theirs.result.status).toBe(200);
    expect(theirs.events.map((e) => e.action)).toEqual(['evidence.case.searched']);
    const metadata = theirs.events[0]!.metadata as Record<string, unknown>;
    expect(metadata.queryKeys).toEqual(['q', 'tags']);
    expect(metadata.querySha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(metadata)).not.toMatch(/merger|lunch/);
    expect(JSON.stringify(metadata)).not.toContain(s.theirs.id);
  });

  it('refuses a user of another organization and answers 404 for an unknown case', async () => {
    const s = await scenario();
    const stranger = await createUser();
    const refused = await s.search({ q: 'merger' }, stranger.accessToken);
    expectError(refused, 403, 'INSUFFICIENT_ROLE');
    expect(JSON.stringify(refused.body)).not.toMatch(/merger/i);
    // Their own case does not open this one's evidence.
    const other = await caseWithOwner();
    expectError(await s.search({ q: 'merger' }, other.owner.accessToken), 403, 'INSUFFICIENT_ROLE');
    expectError(
      await invoke(routes.searchCase, { token: s.owner.accessToken, path: { caseId: UNKNOWN_ID }, query: { q: 'x' } }),
      404,
      'NOT_FOUND',
    );
  });
});

describeSecurity(routes.searchCase, {
  request: ({ caseId }) => ({ path: { caseId }, query: { q: 'merger' } }),
  succeeds: true,
});
