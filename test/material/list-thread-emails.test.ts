import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { caseWithOwner, createTag, memberWithAccess, seedThread } from './material-helpers';

async function scenario() {
  const { owner, caseId, organizationId } = await caseWithOwner();
  const privileged = await createTag(organizationId, caseId, 'Privileged');
  const hot = await createTag(organizationId, caseId, 'Hot');
  const { threadId, emailIds } = await seedThread(caseId, [
    { minute: 0, to: ['bob@roe.example'], folders: ['INBOX'], tagIds: [privileged.id] },
    { minute: 1, from: 'bob@roe.example', to: ['ann@lee.example'], cc: ['carl@Court.example'], folders: ['SENT'], starred: true, tagIds: [hot.id] },
    { minute: 2, to: ['dana@court.example'], folders: ['INBOX', 'Legal'], unread: true, tagIds: [privileged.id, hot.id] },
    { minute: 3, to: ['erin@other.example'], folders: ['ARCHIVE'], removedTagIds: [hot.id] },
    { minute: 4, to: ['bob@roe.example'] },
  ]);
  const list = (query: Record<string, string | string[]> = {}, token = owner.accessToken) =>
    invoke(routes.listThreadEmails, { token, path: { caseId, threadId }, query });
  const subjectsOf = async (query: Record<string, string | string[]>) => expectData(await list(query)).data?.map((e: { subject: string }) => e.subject) ?? [];
  return { owner, caseId, organizationId, threadId, emailIds, privileged, hot, list, subjectsOf };
}

describe('GET /local-emails/{caseId}/threads/{threadId}/emails', () => {
  it('returns the page object of full email records, date ascending by default', async () => {
    const s = await scenario();
    const page = expectData(await s.list());
    expect(page).toMatchObject({ total: 5, page: 1, perPage: 10, totalPages: 1, nextPage: null, previousPage: null });
    expect(page.data.map((e: { subject: string }) => e.subject)).toEqual(['Email 0', 'Email 1', 'Email 2', 'Email 3', 'Email 4']);
    expect(page.data[2]).toMatchObject({
      emailDataProvider: null,
      threadId: s.threadId,
      unread: true,
      folders: ['INBOX', 'Legal'],
      tags: expect.arrayContaining([expect.objectContaining({ name: 'Privileged', nameLowercase: 'privileged', isActive: true })]),
      attachments: [],
    });
    // A removed tag stays in attachedTags with its removal, but not in tags.
    expect(page.data[3].tags).toEqual([]);
    expect(page.data[3].attachedTags).toEqual([expect.objectContaining({ tagId: s.hot.id, tag: 'Hot', removedBy: 'user', removedAt: expect.any(String) })]);
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
      Object.entries(query).map(([key, value]) => [key, Array.isArray(value) ? value : value.replace('PRIV', s.privileged.id).replace('HOT', s.hot.id).replace('TAG', s.privileged.id)]),
    );
    expect(await s.subjectsOf(resolved)).toEqual(expected);
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
    [{ domains: 'court.example', excludeDomains: 'COURT.example' }, 'domains and excludeDomains overlap'],
    [{ tags: 'HOT', excludeTags: 'HOT' }, 'tags and excludeTags overlap'],
  ])('answers 400 when %j overlap', async (query, message) => {
    const s = await scenario();
    const resolved = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v.replace('HOT', s.hot.id)]));
    const result = await s.list(resolved);
    expectError(result, 400, 'BAD_REQUEST');
    expect(result.body.error.message).toContain(message);
  });

  it.each([
    [{ starred: 'yes' }, 'query.starred'],
    [{ untagged: '2' }, 'query.untagged'],
    [{ tags: 'not-a-uuid' }, 'query.tags.0'],
    [{ sortBy: 'subject' }, 'query.sortBy'],
    [{ sortOrder: 'up' }, 'query.sortOrder'],
    [{ perPage: '0' }, 'query.perPage'],
    [{ page: 'two' }, 'query.page'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const s = await scenario();
    expectError(await s.list(query), 400, 'VALIDATION_FAILED', [field]);
  });

  it('answers 404 for an unknown thread and for a thread of another case', async () => {
    const s = await scenario();
    const other = await caseWithOwner();
    const foreign = await seedThread(other.caseId, [{ minute: 0 }]);
    expectError(await invoke(routes.listThreadEmails, { token: s.owner.accessToken, path: { caseId: s.caseId, threadId: foreign.threadId } }), 404, 'NOT_FOUND');
    expectError(await invoke(routes.listThreadEmails, { token: s.owner.accessToken, path: { caseId: s.caseId, threadId: '01a2028b-8234-78ea-a301-3af91dee41ca' } }), 404, 'NOT_FOUND');
  });

  it('never shows another organization or a member without case access any data', async () => {
    const s = await scenario();
    const stranger = await createUser();
    const strangerResult = await s.list({}, stranger.accessToken);
    expectError(strangerResult, 403, 'INSUFFICIENT_ROLE');
    expect(JSON.stringify(strangerResult.body)).not.toContain('Email 0');
    const colleague = await memberWithAccess(s.organizationId, s.caseId, 'viewer');
    expectData(await s.list({}, colleague.accessToken));
    expectError(await invoke(routes.listThreadEmails, { path: { caseId: s.caseId, threadId: s.threadId } }), 401, 'UNAUTHENTICATED');
  });
});
