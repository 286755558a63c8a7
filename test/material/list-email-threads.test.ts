import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { caseWithOwner } from '../harness/cases';
import { seedThread } from '../harness/material';

const threads = (token: string, caseId: string, query: Record<string, string> = {}) =>
  invoke(routes.listEmailThreads, { token, path: { caseId }, query });

describe('GET /local-emails/{caseId}/threads', () => {
  it("lists the case's threads with their message counts, and no other case's", async () => {
    // Prepare: two threads in the case, one in another case of the organization
    const s = await caseWithOwner();
    const one = await seedThread(s.caseId, [{ minute: 0 }]);
    const two = await seedThread(s.caseId, [{ minute: 1 }, { minute: 2 }]);
    const other = await caseWithOwner();
    await seedThread(other.caseId, [{ minute: 3 }]);
    // Act
    const page = expectData(await threads(s.owner.accessToken, s.caseId));
    // Assess
    expect(page.total).toBe(2);
    const counts = Object.fromEntries(
      page.data.map((t: { id: string; messageCount: number }) => [t.id, t.messageCount]),
    );
    expect(counts).toEqual({ [one.threadId]: 1, [two.threadId]: 2 });
  });

  it('pages with perPage and answers an empty page for a case without threads', async () => {
    const s = await caseWithOwner();
    await seedThread(s.caseId, [{ minute: 0 }]);
    await seedThread(s.caseId, [{ minute: 1 }]);
    const page = expectData(await threads(s.owner.accessToken, s.caseId, { perPage: '1' }));
    expect(page.total).toBe(2);
    expect(page.data).toHaveLength(1);
    const empty = await caseWithOwner();
    expect(expectData(await threads(empty.owner.accessToken, empty.caseId)).total).toBe(0);
  });

  it.each([
    [{ perPage: '0' }, 'query.perPage'],
    [{ sortOrder: 'up' }, 'query.sortOrder'],
  ])('answers 400 naming the field for %j', async (query, field) => {
    const s = await caseWithOwner();
    expectError(await threads(s.owner.accessToken, s.caseId, query), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.listEmailThreads, { request: ({ caseId }) => ({ path: { caseId } }), succeeds: true });
