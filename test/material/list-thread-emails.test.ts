import { and, eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { attachments, emailTags, organizationMembers, tags } from '../../lib/db/schema';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { createTag, seedThread } from '../harness/material';
import { describeSecurity } from '../harness/security';

/** The SQL text of every statement `run` sends (not prepared ones, which this route does not use). */
async function statementsOf<T>(run: () => Promise<T>): Promise<string[]> {
  const session = (db() as unknown as { session: { prepareQuery: (query: { sql: string }) => unknown } }).session;
  const spy = vi.spyOn(session, 'prepareQuery');
  try {
    await run();
    return spy.mock.calls.map(([query]) => query.sql);
  } finally {
    spy.mockRestore();
  }
}

/** A tag of a given side and type, written directly (the tag routes are another part's). */
async function sideTag(
  organizationId: string,
  caseId: string,
  name: string,
  side: 'org' | 'opposing_council',
  createdById: string,
  type: 'case' | 'user' = 'case',
) {
  const [tag] = await db()
    .insert(tags)
    .values({
      organizationId,
      caseId,
      name,
      nameLowercase: name.toLowerCase(),
      creatorAccessType: side,
      createdById,
      type,
    })
    .returning();
  return tag!;
}

async function scenario() {
  const { owner, caseId, organizationId } = await caseWithOwner();
  const privileged = await createTag(organizationId, caseId, 'Privileged');
  const hot = await createTag(organizationId, caseId, 'Hot');
  const { threadId, emailIds } = await seedThread(caseId, [
    { minute: 0, to: ['bob@roe.example'], folders: ['INBOX'], tagIds: [privileged.id] },
    {
      minute: 1,
      from: 'bob@roe.example',
      to: ['ann@lee.example'],
      cc: ['carl@Court.example'],
      folders: ['SENT'],
      starred: true,
      tagIds: [hot.id],
    },
    {
      minute: 2,
      to: ['dana@court.example'],
      folders: ['INBOX', 'Legal'],
      unread: true,
      tagIds: [privileged.id, hot.id],
    },
    { minute: 3, to: ['erin@other.example'], folders: ['ARCHIVE'], removedTagIds: [hot.id] },
    { minute: 4, to: ['bob@roe.example'] },
  ]);
  const list = (query: Record<string, string | string[]> = {}, token = owner.accessToken) =>
    invoke(routes.listThreadEmails, { token, path: { caseId, threadId }, query });
  const subjectsOf = async (query: Record<string, string | string[]>) =>
    expectData(await list(query)).data?.map((e: { subject: string }) => e.subject) ?? [];
  return { owner, caseId, organizationId, threadId, emailIds, privileged, hot, list, subjectsOf };
}

describe('GET /local-emails/{caseId}/threads/{threadId}/emails', () => {
  it('returns the page object of full email records, date ascending by default', async () => {
    const s = await scenario();
    const page = expectData(await s.list());
    expect(page).toMatchObject({ total: 5, page: 1, perPage: 10, totalPages: 1, nextPage: null, previousPage: null });
    expect(page.data.map((e: { subject: string }) => e.subject)).toEqual([
      'Email 0',
      'Email 1',
      'Email 2',
      'Email 3',
      'Email 4',
    ]);
    expect(page.data[2]).toMatchObject({
      emailDataProvider: null,
      threadId: s.threadId,
      unread: true,
      folders: ['INBOX', 'Legal'],
      tags: expect.arrayContaining([
        expect.objectContaining({ name: 'Privileged', nameLowercase: 'privileged', isActive: true }),
      ]),
      attachments: [],
    });
    // A removed tag stays in attachedTags with its removal, but not in tags.
    expect(page.data[3].tags).toEqual([]);
    expect(page.data[3].attachedTags).toEqual([
      expect.objectContaining({ tagId: s.hot.id, tag: 'Hot', removedBy: 'user', removedAt: expect.any(String) }),
    ]);
  });

  it.each([
    [{ sortOrder: 'desc' }, ['Email 4', 'Email 3', 'Email 2', 'Email 1', 'Email 0']],
    [{ folders: 'SENT,Legal' }, ['Email 1', 'Email 2']],
    [{ folders: ['ARCHIVE', 'SENT'] }, ['Email 1', 'Email 3']],
    [{ domains: 'COURT.example' }, ['Email 1', 'Email 2']],
    [{ excludeDomains: 'court.example,other.example' }, ['Email 0', 'Email 4']],
    [{ domains: 'roe.example', excludeDomains: 'court.example' }, ['Email 0', 'Email 4']],
    [{ excludeEmails: 'BOB@roe.example' }, ['Email 2', 'Email 3']],
    [{ starred: 'true' }, ['Email 1']],
    [{ starred: '0' }, ['Email 0', 'Email 2', 'Email 3', 'Email 4']],
    [{ unread: '1' }, ['Email 2']],
    [{ untagged: '1' }, ['Email 3', 'Email 4']],
    [{ untagged: 'true', tags: 'TAG' }, ['Email 3', 'Email 4']],
    [{ untagged: 'false' }, ['Email 0', 'Email 1', 'Email 2', 'Email 3', 'Email 4']],
    [{ tags: 'HOT' }, ['Email 1', 'Email 2']],
    [{ tags: 'PRIV,HOT' }, ['Email 0', 'Email 1', 'Email 2']],
    [{ excludeTags: 'HOT' }, ['Email 0', 'Email 3', 'Email 4']],
    [{ tags: 'PRIV', excludeTags: 'HOT' }, ['Email 0']],
    [{ folders: 'INBOX', domains: 'court.example', unread: 'true', sortBy: 'date' }, ['Email 2']],
  ])('filters %j', async (query, expected) => {
    const s = await scenario();
    const resolved = Object.fromEntries(
      Object.entries(query).map(([key, value]) => [
        key,
        Array.isArray(value)
          ? value
          : value.replace('PRIV', s.privileged.id).replace('HOT', s.hot.id).replace('TAG', s.privileged.id),
      ]),
    );
    expect(await s.subjectsOf(resolved)).toEqual(expected);
  });

  it('loads attachments and tags as full records', async () => {
    const s = await scenario();
    await db()
      .insert(attachments)
      .values([
        {
          emailId: s.emailIds[1]!,
          name: 'offer.pdf',
          providerId: 'cases/x/offer.pdf',
          convertedName: null,
          convertedProviderId: '',
          provider: 'object-storage',
          size: 2048,
          transferState: null,
        },
        {
          emailId: s.emailIds[1]!,
          name: 'annex.docx',
          providerId: 'cases/x/annex.docx',
          convertedName: 'annex.pdf',
          convertedProviderId: 'cases/x/annex.pdf',
          provider: 'object-storage',
          size: 10,
          transferState: 2,
          sha256: 'ab'.repeat(32),
        },
      ]);
    const page = expectData(await s.list({ starred: 'true' }));
    const [email] = page.data;
    expect(email.attachments).toEqual([
      {
        id: expect.any(String),
        name: 'annex.docx',
        providerId: 'cases/x/annex.docx',
        convertedName: 'annex.pdf',
        convertedProviderId: 'cases/x/annex.pdf',
        provider: 'object-storage',
        size: 10,
        transferState: 2,
        sha256: 'ab'.repeat(32),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
      {
        id: expect.any(String),
        name: 'offer.pdf',
        providerId: 'cases/x/offer.pdf',
        convertedName: null,
        convertedProviderId: '',
        provider: 'object-storage',
        size: 2048,
        transferState: null,
        sha256: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    ]);
    expect(email.tags).toEqual([
      {
        id: s.hot.id,
        name: 'Hot',
        nameLowercase: 'hot',
        backgroundColor: s.hot.backgroundColor,
        textColor: s.hot.textColor,
        type: 'case',
        severity: 'info',
        origin: 'manual',
        creatorAccessType: null,
        isActive: true,
        createdAt: s.hot.createdAt.toISOString(),
        updatedAt: s.hot.updatedAt.toISOString(),
      },
    ]);
    expect(email.attachedTags).toEqual([
      {
        tagId: s.hot.id,
        tag: 'Hot',
        addedBy: 'user',
        addedById: null,
        removedAt: null,
        removedBy: null,
        removedById: null,
      },
    ]);
    // The other emails of the page carry no attachment of another email.
    expect(
      expectData(await s.list()).data.filter((e: { attachments: unknown[] }) => e.attachments.length > 0),
    ).toHaveLength(1);
  });

  it("shows and filters only the tags of the caller's side: the other side's tags are invisible and match nothing", async () => {
    const s = await scenario();
    const opposing = await memberWithAccess(s.organizationId, s.caseId, 'opposing_counsel', 'client');
    const colleague = await memberWithAccess(s.organizationId, s.caseId, 'admin');
    const theirs = await sideTag(s.organizationId, s.caseId, 'Their theory', 'opposing_council', opposing.id);
    const colleagues = await sideTag(s.organizationId, s.caseId, 'Mine only', 'org', colleague.id, 'user');
    // Email 3 (only a removed firm tag) and Email 4 (untagged) get the other side's tag; Email 4 a colleague's own tag.
    await db()
      .insert(emailTags)
      .values([
        { emailId: s.emailIds[3]!, tagId: theirs.id, addedBy: 'user', addedById: opposing.id },
        { emailId: s.emailIds[4]!, tagId: theirs.id, addedBy: 'user', addedById: opposing.id },
        { emailId: s.emailIds[4]!, tagId: colleagues.id, addedBy: 'user', addedById: colleague.id },
      ]);
    const firm = expectData(await s.list()).data;
    expect(firm[3].tags).toEqual([]);
    expect(firm[3].attachedTags.map((t: { tagId: string }) => t.tagId)).toEqual([s.hot.id]);
    expect(firm[4].tags).toEqual([]);
    expect(firm[4].attachedTags).toEqual([]);
    expect(JSON.stringify(firm)).not.toContain('Their theory');
    expect(await s.subjectsOf({ tags: theirs.id })).toEqual([]);
    expect(await s.subjectsOf({ excludeTags: theirs.id })).toHaveLength(5);
    expect(await s.subjectsOf({ untagged: 'true' })).toEqual(['Email 3', 'Email 4']);
    // The colleague sees their own user tag, nobody else does.
    const own = expectData(await s.list({ tags: colleagues.id }, colleague.accessToken)).data;
    expect(own.map((e: { subject: string }) => e.subject)).toEqual(['Email 4']);
    expect(own[0].tags.map((t: { id: string }) => t.id)).toEqual([colleagues.id]);
    // Opposing counsel see their own tag, and none of the firm's.
    const theirView = expectData(await s.list({}, opposing.accessToken)).data;
    expect(theirView[0].tags).toEqual([]);
    expect(theirView[0].attachedTags).toEqual([]);
    expect(theirView[4].tags.map((t: { id: string }) => t.id)).toEqual([theirs.id]);
    const theirSubjects = async (query: Record<string, string>) =>
      expectData(await s.list(query, opposing.accessToken)).data.map((e: { subject: string }) => e.subject);
    expect(await theirSubjects({ tags: s.privileged.id })).toEqual([]);
    expect(await theirSubjects({ excludeTags: s.hot.id })).toHaveLength(5);
    expect(await theirSubjects({ untagged: '1' })).toEqual(['Email 0', 'Email 1', 'Email 2']);
    expect(await theirSubjects({ tags: theirs.id })).toEqual(['Email 3', 'Email 4']);
  });

  it('never reads the search column of emails', async () => {
    const s = await scenario();
    const statements = await statementsOf(() => s.list());
    const reads = statements.filter((text) => /from "emails"/.test(text));
    expect(reads.length).toBeGreaterThan(0);
    for (const text of reads) expect(text).not.toContain('"search"');
  });

  it('sends the same number of queries whatever the page holds (no N+1)', async () => {
    const s = await scenario();
    const small = await seedThread(s.caseId, [{ minute: 0 }]);
    await db()
      .insert(attachments)
      .values(s.emailIds.map((emailId) => ({ emailId, name: 'a.txt', providerId: `k/${emailId}`, size: 1 })));
    const one = await countQueries(() => s.list({}, s.owner.accessToken));
    const onSmall = await countQueries(() =>
      invoke(routes.listThreadEmails, {
        token: s.owner.accessToken,
        path: { caseId: s.caseId, threadId: small.threadId },
      }),
    );
    expect(expectData(one.result).data).toHaveLength(5);
    expect(expectData(onSmall.result).data).toHaveLength(1);
    expect(one.queries).toBeGreaterThan(3);
    expect(one.queries).toBe(onSmall.queries);
  });

  it('pages filtered results with page/perPage and skip/limit, totals over every match', async () => {
    const s = await scenario();
    const second = expectData(await s.list({ excludeTags: s.hot.id, perPage: '2', page: '2' }));
    expect(second).toMatchObject({ total: 3, page: 2, perPage: 2, totalPages: 2, nextPage: null, previousPage: 1 });
    expect(second.data.map((e: { subject: string }) => e.subject)).toEqual(['Email 4']);
    const skipped = expectData(await s.list({ skip: '1', limit: '2', sortOrder: 'desc' }));
    expect(skipped).toMatchObject({ total: 5, skip: 1, limit: 2, totalPages: 3 });
    expect(skipped.data.map((e: { subject: string }) => e.subject)).toEqual(['Email 3', 'Email 2']);
  });

  it.each([
    [
      { domains: 'court.example', excludeDomains: 'COURT.example' },
      'query.excludeDomains',
      'domains and excludeDomains overlap',
    ],
    [{ tags: 'HOT', excludeTags: 'HOT' }, 'query.excludeTags', 'tags and excludeTags overlap'],
    [{ tags: 'PRIV,UPPERHOT', excludeTags: 'HOT' }, 'query.excludeTags', 'tags and excludeTags overlap'],
    [{ untagged: '1', tags: 'HOT', excludeTags: 'HOT' }, 'query.excludeTags', 'tags and excludeTags overlap'],
  ])('answers 400 VALIDATION_FAILED naming the field when %j overlap', async (query, field, message) => {
    const s = await scenario();
    const resolved = Object.fromEntries(
      Object.entries(query).map(([k, v]) => [
        k,
        v.replace('UPPERHOT', s.hot.id.toUpperCase()).replace('HOT', s.hot.id).replace('PRIV', s.privileged.id),
      ]),
    );
    const result = await s.list(resolved);
    expectError(result, 400, 'VALIDATION_FAILED', [field]);
    expect(result.body.error.details[0].message).toContain(message);
  });

  it.each([
    [{ starred: 'yes' }, 'query.starred'],
    [{ untagged: '2' }, 'query.untagged'],
    [{ tags: 't'.repeat(201) }, 'query.tags.0'],
    [{ sortBy: 'subject' }, 'query.sortBy'],
    [{ sortOrder: 'up' }, 'query.sortOrder'],
    [{ perPage: '0' }, 'query.perPage'],
    [{ page: 'two' }, 'query.page'],
    // Postgres text cannot hold NUL: bad input, never a 500.
    [{ folders: 'IN\u0000BOX' }, 'query.folders'],
    [{ domains: 'court\u0000.example' }, 'query.domains'],
    [{ excludeDomains: 'court\u0000.example' }, 'query.excludeDomains'],
    [{ excludeEmails: 'bob\u0000@roe.example' }, 'query.excludeEmails'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const s = await scenario();
    expectError(await s.list(query), 400, 'VALIDATION_FAILED', [field]);
  });

  it('answers 404 for an unknown thread and for a thread of another case', async () => {
    const s = await scenario();
    const other = await caseWithOwner();
    const foreign = await seedThread(other.caseId, [{ minute: 0 }]);
    expectError(
      await invoke(routes.listThreadEmails, {
        token: s.owner.accessToken,
        path: { caseId: s.caseId, threadId: foreign.threadId },
      }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await invoke(routes.listThreadEmails, {
        token: s.owner.accessToken,
        path: { caseId: s.caseId, threadId: '01a2028b-8234-78ea-a301-3af91dee41ca' },
      }),
      404,
      'NOT_FOUND',
    );
  });

  it('never shows another organization or a member without case access any data', async () => {
    const s = await scenario();
    const stranger = await createUser();
    const strangerResult = await s.list({}, stranger.accessToken);
    expectError(strangerResult, 403, 'INSUFFICIENT_ROLE');
    expect(JSON.stringify(strangerResult.body)).not.toContain('Email 0');
    const colleague = await memberWithAccess(s.organizationId, s.caseId, 'viewer');
    expectData(await s.list({}, colleague.accessToken));
    // Case access outlives membership in the table, never in effect: a former member reads nothing.
    await db()
      .delete(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, s.organizationId), eq(organizationMembers.userId, colleague.id)),
      );
    const former = await s.list({}, colleague.accessToken);
    expectError(former, 403, 'INSUFFICIENT_ROLE');
    expect(JSON.stringify(former.body)).not.toContain('Email 0');
  });
});

describeSecurity(routes.listThreadEmails, {
  request: async ({ caseId }) => ({ path: { caseId, threadId: (await seedThread(caseId, [{ minute: 0 }])).threadId } }),
  succeeds: true,
  everyToken: true,
});
