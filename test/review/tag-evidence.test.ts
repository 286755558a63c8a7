import { randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import {
  deviceNotes,
  deviceNoteTags,
  devices,
  emails,
  emailTags,
  networkConversations,
  networkConversationTags,
  networkMessages,
  supportTickets,
  supportTicketTags,
  taggingJobs,
  tags,
} from '../../lib/db/schema';
import { drainTaggingJobs, runTaggingJob } from '../../lib/review';
import { auditEventsOf } from '../harness/audit';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { UNKNOWN_ID } from '../harness/ids';
import { expectData, expectError, invoke } from '../harness/invoke';
import { createProfile, seedThread } from '../harness/material';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';
import { createTagRow } from '../harness/tags';

/** A tag row written directly (the tag routes are another part's). */
async function insertTag(
  organizationId: string,
  values: {
    caseId?: string | null;
    name?: string;
    type?: 'system' | 'organization' | 'case' | 'user';
    side?: 'org' | 'opposing_council' | null;
    createdById?: string | null;
    isActive?: boolean;
  } = {},
) {
  return createTagRow({
    organizationId,
    caseId: values.caseId ?? null,
    name: values.name ?? `Tag ${randomBytes(3).toString('hex')}`,
    type: values.type ?? 'case',
    side: values.side === undefined ? 'org' : values.side,
    createdById: values.createdById ?? null,
    isActive: values.isActive ?? true,
  });
}

async function scenario() {
  const s = await caseWithOwner();
  const opposing = await memberWithAccess(s.organizationId, s.caseId, 'opposing_counsel', 'client');
  const viewer = await memberWithAccess(s.organizationId, s.caseId, 'viewer');
  const firmTag = await insertTag(s.organizationId, { caseId: s.caseId, name: 'Privileged' });
  const oppTag = await insertTag(s.organizationId, {
    caseId: s.caseId,
    name: 'Their theory',
    side: 'opposing_council',
    createdById: opposing.id,
  });
  const systemTag = await insertTag(s.organizationId, { type: 'system', name: 'Needs review', side: null });
  const inactiveTag = await insertTag(s.organizationId, { caseId: s.caseId, name: 'Old', isActive: false });
  const { threadId, emailIds } = await seedThread(s.caseId, [{ minute: 0 }, { minute: 1 }, { minute: 2 }]);
  const shown = await createProfile(s.caseId, 'professional_network', 'Ann Lee', true);
  const hidden = await createProfile(s.caseId, 'professional_network', 'Bob Roe', false);
  const chat = await createProfile(s.caseId, 'chat_platform', 'Help desk', false);
  const conversation = async (profileId: string, title: string) => {
    const [row] = await db()
      .insert(networkConversations)
      .values({ caseId: s.caseId, profileId, externalId: title, title, participants: [] })
      .returning();
    return row!;
  };
  const shownConversation = await conversation(shown.id, 'Shown');
  const hiddenConversation = await conversation(hidden.id, 'Hidden');
  const [ticket] = await db()
    .insert(supportTickets)
    .values({ caseId: s.caseId, profileId: chat.id, ticketId: 7, subject: 'Refund' })
    .returning();
  const [device] = await db()
    .insert(devices)
    .values({ organizationId: s.organizationId, deviceId: `dev-${randomBytes(3).toString('hex')}`, deviceType: 'ios' })
    .returning();
  const [note] = await db()
    .insert(deviceNotes)
    .values({ caseId: s.caseId, deviceId: device!.id, noteId: 1, title: 'Call notes' })
    .returning();
  const tag = (body: Record<string, unknown>, token = s.owner.accessToken, caseId = s.caseId) =>
    invoke(routes.tagEvidence, { token, path: { caseId }, body });
  const emailItems = (...indexes: number[]) => indexes.map((i) => ({ kind: 'email', id: emailIds[i]! }));
  const links = () => db().select().from(emailTags).orderBy(emailTags.createdAt, emailTags.id);
  const thread = (token = s.owner.accessToken) =>
    invoke(routes.listThreadEmails, { token, path: { caseId: s.caseId, threadId } });
  return {
    ...s,
    opposing,
    viewer,
    firmTag,
    oppTag,
    systemTag,
    inactiveTag,
    threadId,
    emailIds,
    shownConversation,
    hiddenConversation,
    ticket: ticket!,
    note: note!,
    tag,
    emailItems,
    links,
    thread,
  };
}

const linksOfCase = async (emailIds: string[]) =>
  (await db().select().from(emailTags)).filter((link) => emailIds.includes(link.emailId));

describe('POST /cases/{caseId}/tagging by items', () => {
  it('adds, removes and adds again, keeping every link and an audit event per change', async () => {
    const s = await scenario();
    const item = s.emailItems(0);
    expect(expectData(await s.tag({ add: [s.firmTag.id], items: item }), 202)).toEqual({
      items: 1,
      added: 1,
      removed: 0,
    });
    expect(expectData(await s.tag({ remove: [s.firmTag.id], items: item }), 202)).toEqual({
      items: 1,
      added: 0,
      removed: 1,
    });
    expect(expectData(await s.tag({ add: [s.firmTag.id], items: item }), 202)).toEqual({
      items: 1,
      added: 1,
      removed: 0,
    });
    // Adding what is already on it changes nothing.
    expect(expectData(await s.tag({ add: [s.firmTag.id], items: item }), 202)).toEqual({
      items: 1,
      added: 0,
      removed: 0,
    });
    const email = expectData(await s.thread()).data[0];
    expect(email.tags.map((t: { id: string }) => t.id)).toEqual([s.firmTag.id]);
    expect(email.attachedTags).toHaveLength(2);
    expect(email.attachedTags).toEqual(
      expect.arrayContaining([
        {
          tagId: s.firmTag.id,
          tag: 'Privileged',
          addedBy: 'user',
          addedById: s.owner.id,
          removedAt: expect.any(String),
          removedBy: 'user',
          removedById: s.owner.id,
        },
        {
          tagId: s.firmTag.id,
          tag: 'Privileged',
          addedBy: 'user',
          addedById: s.owner.id,
          removedAt: null,
          removedBy: null,
          removedById: null,
        },
      ]),
    );
    const events = await auditEventsOf(s.organizationId, 'evidence.tagged');
    expect(events).toHaveLength(4);
    expect(events.map((e) => [e.metadata.added, e.metadata.removed])).toEqual([
      [1, 0],
      [0, 1],
      [1, 0],
      [0, 0],
    ]);
    expect(events[1]!.caseId).toBe(s.caseId);
    expect(events[1]!.actorUserId).toBe(s.owner.id);
    expect(events[1]!.metadata).toMatchObject({
      items: 1,
      removeTags: [{ id: s.firmTag.id, name: 'Privileged' }],
      changes: [{ op: 'remove', tagId: s.firmTag.id, kind: 'email', itemIds: [s.emailIds[0]] }],
    });
  });

  it('tags every kind of item at once, adding and removing, and counts each item once', async () => {
    const s = await scenario();
    const items = [
      ...s.emailItems(0, 1),
      { kind: 'email', id: s.emailIds[0]!.toUpperCase() },
      { kind: 'network-conversation', id: s.hiddenConversation.id },
      { kind: 'support-ticket', id: s.ticket.id },
      { kind: 'device-note', id: s.note.id },
    ];
    expect(expectData(await s.tag({ add: [s.firmTag.id, s.systemTag.id], items }), 202)).toEqual({
      items: 5,
      added: 10,
      removed: 0,
    });
    expect(expectData(await s.tag({ remove: [s.systemTag.id], items }), 202)).toEqual({
      items: 5,
      added: 0,
      removed: 5,
    });
    const active = async (table: typeof networkConversationTags | typeof supportTicketTags | typeof deviceNoteTags) =>
      (await db().select().from(table).where(isNull(table.removedAt))).map((l) => l.tagId);
    expect(await active(networkConversationTags)).toEqual([s.firmTag.id]);
    expect(await active(supportTicketTags)).toEqual([s.firmTag.id]);
    expect(await active(deviceNoteTags)).toEqual([s.firmTag.id]);
    expect((await linksOfCase(s.emailIds)).filter((l) => l.removedAt === null)).toHaveLength(2);
  });

  it('is all or nothing: one unknown item or one tag the caller may not see is 404 and changes nothing', async () => {
    const s = await scenario();
    const before = await auditEventsOf(s.organizationId, 'evidence.tagged');
    for (const body of [
      { add: [s.firmTag.id], items: [...s.emailItems(0, 1), { kind: 'email', id: UNKNOWN_ID }] },
      { add: [s.firmTag.id], items: [...s.emailItems(0), { kind: 'device-note', id: s.emailIds[1] }] },
      { add: [s.firmTag.id], items: [...s.emailItems(0), { kind: 'email', id: 'not-an-id' }] },
      { add: [s.firmTag.id, s.oppTag.id], items: s.emailItems(0, 1) },
      { add: [s.firmTag.id], remove: [UNKNOWN_ID], items: s.emailItems(0) },
      { add: ['nope'], items: s.emailItems(0) },
    ]) {
      const result = await s.tag(body);
      expectError(result, 404, 'NOT_FOUND');
    }
    // An email of another case of the same organization is not in this case.
    const other = await seedThread((await caseWithOwner()).caseId, [{ minute: 0 }]);
    expectError(
      await s.tag({ add: [s.firmTag.id], items: [...s.emailItems(0), { kind: 'email', id: other.emailIds[0] }] }),
      404,
      'NOT_FOUND',
    );
    expect(await linksOfCase(s.emailIds)).toEqual([]);
    expect(await auditEventsOf(s.organizationId, 'evidence.tagged')).toEqual(before);
  });

  it('answers 409 for a deactivated tag to add, but takes one off', async () => {
    const s = await scenario();
    expectError(await s.tag({ add: [s.inactiveTag.id], items: s.emailItems(0) }), 409, 'CONFLICT');
    await db().insert(emailTags).values({ emailId: s.emailIds[0]!, tagId: s.inactiveTag.id, addedBy: 'user' });
    expect(expectData(await s.tag({ remove: [s.inactiveTag.id], items: s.emailItems(0) }), 202)).toMatchObject({
      removed: 1,
    });
  });

  it.each([
    [
      '1,001 items',
      (s: Scenario) => ({ add: [s.firmTag.id], items: Array(1001).fill(s.emailItems(0)[0]) }),
      'body.items',
    ],
    ['no items', (s: Scenario) => ({ add: [s.firmTag.id], items: [] }), 'body.items'],
    ['neither items nor filter', (s: Scenario) => ({ add: [s.firmTag.id] }), 'body.items'],
    [
      'both items and filter',
      (s: Scenario) => ({ add: [s.firmTag.id], items: s.emailItems(0), filter: { kind: 'email' } }),
      'body.filter',
    ],
    ['no tag', (s: Scenario) => ({ items: s.emailItems(0) }), 'body.add'],
    ['an empty add list', (s: Scenario) => ({ add: [], remove: [s.firmTag.id], items: s.emailItems(0) }), 'body.add'],
    [
      'an empty remove list',
      (s: Scenario) => ({ add: [s.firmTag.id], remove: [], items: s.emailItems(0) }),
      'body.remove',
    ],
    [
      'a tag both added and removed',
      (s: Scenario) => ({ add: [s.firmTag.id], remove: [s.firmTag.id.toUpperCase()], items: s.emailItems(0) }),
      'body.remove',
    ],
    [
      'an unknown kind',
      (s: Scenario) => ({ add: [s.firmTag.id], items: [{ kind: 'fax', id: UNKNOWN_ID }] }),
      'body.items.0.kind',
    ],
    [
      'a filter of no known kind',
      (s: Scenario) => ({ add: [s.firmTag.id], filter: { search: { q: 'x' } } }),
      'body.filter.kind',
    ],
    [
      'a search filter with an empty q',
      (s: Scenario) => ({ add: [s.firmTag.id], filter: { kind: 'search', q: '' } }),
      'body.filter.q',
    ],
    [
      'a search filter of exclusions only',
      (s: Scenario) => ({ add: [s.firmTag.id], filter: { kind: 'search', q: '-refund' } }),
      'body.filter.q',
    ],
    [
      'a search filter with from after to',
      (s: Scenario) => ({
        add: [s.firmTag.id],
        filter: { kind: 'search', q: 'refund', from: '2026-02-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
      }),
      'body.filter.from',
    ],
    [
      'a search filter with an unknown kind',
      (s: Scenario) => ({ add: [s.firmTag.id], filter: { kind: 'search', q: 'refund', kinds: ['fax'] } }),
      'body.filter.kinds.0',
    ],
  ])('answers 400 naming the field for %s', async (_label, body, field) => {
    const s = await scenario();
    expectError(await s.tag(body(s)), 400, 'VALIDATION_FAILED', [field]);
    expect(await linksOfCase(s.emailIds)).toEqual([]);
  });

  it('takes 1,000 items in one request with as many queries as one item', async () => {
    const s = await scenario();
    const many = await seedThread(
      s.caseId,
      Array.from({ length: 40 }, (_, minute) => ({ minute })),
    );
    const items = Array.from({ length: 1000 }, (_, i) => ({ kind: 'email', id: many.emailIds[i % 40]! }));
    const one = await countQueries(() => s.tag({ add: [s.firmTag.id], items: s.emailItems(0) }));
    const thousand = await countQueries(() => s.tag({ add: [s.firmTag.id], items }));
    expect(expectData(thousand.result, 202)).toEqual({ items: 40, added: 40, removed: 0 });
    expect(thousand.queries).toBe(one.queries);
  });

  it('refuses viewers with 403 and changes nothing', async () => {
    const s = await scenario();
    expectError(
      await s.tag({ add: [s.firmTag.id], items: s.emailItems(0) }, s.viewer.accessToken),
      403,
      'INSUFFICIENT_ROLE',
    );
    expect(await linksOfCase(s.emailIds)).toEqual([]);
  });

  it("refuses another organization's owner, and another organization's tag is 404", async () => {
    const s = await scenario();
    const other = await caseWithOwner();
    const result = await s.tag({ add: [s.firmTag.id], items: s.emailItems(0) }, other.owner.accessToken);
    expect(result.status).toBe(403);
    const foreignTag = await insertTag(other.organizationId, { caseId: other.caseId });
    expectError(await s.tag({ add: [foreignTag.id], items: s.emailItems(0) }), 404, 'NOT_FOUND');
    expect(await linksOfCase(s.emailIds)).toEqual([]);
  });

  it('keeps opposing counsel to their own tags and to what they may see, and their work product out of the trail', async () => {
    const s = await scenario();
    const as = s.opposing.accessToken;
    // The firm's tags do not exist for them; system tags do.
    expectError(await s.tag({ add: [s.firmTag.id], items: s.emailItems(0) }, as), 404, 'NOT_FOUND');
    expectError(await s.tag({ remove: [s.firmTag.id], items: s.emailItems(0) }, as), 404, 'NOT_FOUND');
    // Device notes and conversations of profiles not shown to them do not exist for them.
    expectError(
      await s.tag({ add: [s.oppTag.id], items: [{ kind: 'device-note', id: s.note.id }] }, as),
      404,
      'NOT_FOUND',
    );
    expectError(
      await s.tag({ add: [s.oppTag.id], items: [{ kind: 'network-conversation', id: s.hiddenConversation.id }] }, as),
      404,
      'NOT_FOUND',
    );
    expectError(
      await s.tag({ add: [s.oppTag.id], items: [{ kind: 'support-ticket', id: s.ticket.id }] }, as),
      404,
      'NOT_FOUND',
    );
    expect(
      expectData(
        await s.tag(
          {
            add: [s.oppTag.id, s.systemTag.id],
            items: [...s.emailItems(1), { kind: 'network-conversation', id: s.shownConversation.id }],
          },
          as,
        ),
        202,
      ),
    ).toEqual({ items: 2, added: 4, removed: 0 });
    // The firm cannot use or take off their tag either.
    expectError(await s.tag({ remove: [s.oppTag.id], items: s.emailItems(1) }), 404, 'NOT_FOUND');
    const [event] = await auditEventsOf(s.organizationId, 'evidence.tagged');
    const stored = JSON.stringify(event!.metadata);
    expect(event!.metadata).toMatchObject({
      items: 2,
      added: 4,
      removed: 0,
      detailsSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    for (const secret of [s.oppTag.id, 'Their theory', s.emailIds[1]!, s.shownConversation.id])
      expect(stored).not.toContain(secret);
  });
});

describe('POST /cases/{caseId}/tagging by filter', () => {
  it('answers the queued job (202) and tags what the filter matches in the background', async () => {
    const s = await scenario();
    const result = await s.tag({ add: [s.firmTag.id], filter: { kind: 'email', threadId: s.threadId } });
    const job = expectData(result, 202);
    expect(job).toMatchObject({
      id: expect.any(String),
      status: 'queued',
      totalItems: null,
      processedItems: 0,
      add: [s.firmTag.id],
      remove: [],
      filter: { kind: 'email', threadId: s.threadId },
      startedAt: null,
      finishedAt: null,
    });
    await drainTaggingJobs();
    const done = expectData(
      await invoke(routes.getTaggingJob, { token: s.owner.accessToken, path: { caseId: s.caseId, jobId: job.id } }),
    );
    expect(done).toMatchObject({
      status: 'succeeded',
      totalItems: 3,
      processedItems: 3,
      addedLinks: 3,
      removedLinks: 0,
    });
    expect((await linksOfCase(s.emailIds)).map((l) => l.addedById)).toEqual([s.owner.id, s.owner.id, s.owner.id]);
  });

  it('answers 404 for a thread of another case and 404/409 for its tags, storing no job', async () => {
    const s = await scenario();
    const other = await seedThread((await caseWithOwner()).caseId, [{ minute: 0 }]);
    expectError(
      await s.tag({ add: [s.firmTag.id], filter: { kind: 'email', threadId: other.threadId } }),
      404,
      'NOT_FOUND',
    );
    expectError(await s.tag({ add: [s.oppTag.id], filter: { kind: 'email' } }), 404, 'NOT_FOUND');
    expectError(await s.tag({ add: [s.inactiveTag.id], filter: { kind: 'email' } }), 409, 'CONFLICT');
    expectError(
      await s.tag({
        add: [s.firmTag.id],
        filter: { kind: 'email', tags: [s.firmTag.id], excludeTags: [s.firmTag.id] },
      }),
      400,
      'VALIDATION_FAILED',
      ['body.filter.excludeTags'],
    );
    await drainTaggingJobs();
    expect(await linksOfCase(s.emailIds)).toEqual([]);
  });
});

describe('POST /cases/{caseId}/tagging by a case search', () => {
  /** The scenario with "refund" in an email, both conversations, the ticket's subject and a second note. */
  async function searchScenario() {
    const s = await scenario();
    await db().update(emails).set({ body: 'A refund request' }).where(eq(emails.id, s.emailIds[1]!));
    const message = (conversation: { id: string; profileId: string }, externalId: string) => ({
      caseId: s.caseId,
      conversationId: conversation.id,
      profileId: conversation.profileId,
      externalId,
      from: 'Ann Lee',
      to: 'Bob Roe',
      date: new Date(Date.UTC(2026, 9, 1)),
      content: 'About the refund',
    });
    await db()
      .insert(networkMessages)
      .values([
        message(s.shownConversation, 'm1'),
        message(s.shownConversation, 'm2'),
        message(s.hiddenConversation, 'm3'),
      ]);
    const [refundNote] = await db()
      .insert(deviceNotes)
      .values({ caseId: s.caseId, deviceId: s.note.deviceId, noteId: 2, title: 'Refund call' })
      .returning();
    return { ...s, refundNote: refundNote! };
  }

  /** The active links on the scenario's items. */
  const activeLinks = async (s: Awaited<ReturnType<typeof searchScenario>>) => {
    const active = <T extends { removedAt: Date | null }>(rows: T[], item: (row: T) => string, ours: string[]) =>
      rows.filter((r) => r.removedAt === null && ours.includes(item(r))).map(item);
    return {
      emails: active(await db().select().from(emailTags), (l) => l.emailId, s.emailIds),
      conversations: active(await db().select().from(networkConversationTags), (l) => l.conversationId, [
        s.shownConversation.id,
        s.hiddenConversation.id,
      ]),
      tickets: active(await db().select().from(supportTicketTags), (l) => l.ticketId, [s.ticket.id]),
      notes: active(await db().select().from(deviceNoteTags), (l) => l.noteId, [s.note.id, s.refundNote.id]),
    };
  };

  it('tags everything the search matches, a conversation once for its messages, in batches across kinds', async () => {
    const s = await searchScenario();
    const job = expectData(await s.tag({ add: [s.firmTag.id], filter: { kind: 'search', q: 'refund' } }), 202);
    expect(job.filter).toEqual({ kind: 'search', q: 'refund' });
    await drainTaggingJobs();
    expect(
      expectData(
        await invoke(routes.getTaggingJob, { token: s.owner.accessToken, path: { caseId: s.caseId, jobId: job.id } }),
      ),
    ).toMatchObject({ status: 'succeeded', totalItems: 5, processedItems: 5, addedLinks: 5 });
    const links = await activeLinks(s);
    expect(links.emails).toEqual([s.emailIds[1]]);
    expect(links.conversations.sort()).toEqual([s.shownConversation.id, s.hiddenConversation.id].sort());
    expect(links.tickets).toEqual([s.ticket.id]);
    expect(links.notes).toEqual([s.refundNote.id]);
  });

  it('walks kind by kind from its cursor: batches of two end where a kind ends', async () => {
    const s = await searchScenario();
    const [job] = await db()
      .insert(taggingJobs)
      .values({
        organizationId: s.organizationId,
        caseId: s.caseId,
        createdById: s.owner.id,
        side: 'org',
        add: [s.firmTag.id],
        filter: { kind: 'search', q: 'refund', kinds: ['network-message', 'support-ticket'] },
      })
      .returning();
    expect(await runTaggingJob(job!.id, { batchSize: 2, shouldPause: () => true })).toBe('paused');
    const [paused] = await db().select().from(taggingJobs).where(eq(taggingJobs.id, job!.id));
    expect(paused).toMatchObject({ totalItems: 3, processedItems: 2 });
    expect(paused!.cursor).toMatch(/^network-conversation:/);
    expect(await runTaggingJob(job!.id, { batchSize: 2 })).toBe('succeeded');
    const links = await activeLinks(s);
    expect(links.conversations).toHaveLength(2);
    expect(links.tickets).toEqual([s.ticket.id]);
    expect(links.emails).toEqual([]);
    expect(links.notes).toEqual([]);
  });

  it("tags for opposing counsel only what their side may read: no device notes, no hidden profiles' items", async () => {
    const s = await searchScenario();
    const job = expectData(
      await s.tag({ add: [s.oppTag.id], filter: { kind: 'search', q: 'refund' } }, s.opposing.accessToken),
      202,
    );
    await drainTaggingJobs();
    expect(
      expectData(
        await invoke(routes.getTaggingJob, {
          token: s.opposing.accessToken,
          path: { caseId: s.caseId, jobId: job.id },
        }),
      ),
    ).toMatchObject({ status: 'succeeded', totalItems: 2, addedLinks: 2 });
    const links = await activeLinks(s);
    expect(links.emails).toEqual([s.emailIds[1]]);
    expect(links.conversations).toEqual([s.shownConversation.id]);
    expect(links.tickets).toEqual([]);
    expect(links.notes).toEqual([]);
  });
});

type Scenario = Awaited<ReturnType<typeof scenario>>;

describeSecurity(routes.tagEvidence, {
  request: async ({ caseId, organizationId }) => {
    const tag = await insertTag(organizationId, { caseId });
    const { emailIds } = await seedThread(caseId, [{ minute: 0 }]);
    return { path: { caseId }, body: { add: [tag.id], items: [{ kind: 'email', id: emailIds[0] }] } };
  },
  succeeds: true,
  unchanged: async ({ caseId }) => {
    const links = await db()
      .select({ id: emailTags.id })
      .from(emailTags)
      .innerJoin(tags, eq(tags.id, emailTags.tagId))
      .where(and(eq(tags.caseId, caseId)));
    expect(links).toEqual([]);
  },
});
