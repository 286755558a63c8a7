import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { supportTickets } from '../../lib/db/schema';
import { expectData, expectError, invoke } from '../harness/invoke';
import { caseWithOwner, memberWithAccess } from '../harness/cases';
import { createProfile } from '../harness/material';
import { describeSecurity } from '../harness/security';

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

describeSecurity(routes.listSupportTickets, {
  request: async ({ caseId }) => ({
    path: { caseId, chatPlatformId: (await createProfile(caseId, 'chat_platform', 'Cid Chat', true)).id },
  }),
  succeeds: true,
});
