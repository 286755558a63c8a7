import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import {
  emailThreads,
  networkConversations,
  networkMessages,
  organizations,
  supportTickets,
} from '../../lib/db/schema';
import { createUser, updateUserRow } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { caseWithOwner } from '../harness/cases';
import { createProfile } from '../harness/material';

/**
 * Issue 13: `sortOrder` is honoured on every list that accepts it; without it each list keeps the
 * order the contract states (search: newest first; tickets: the common paging default, asc).
 */

const day = (d: number) => new Date(Date.UTC(2026, 9, d));

describe('GET /chat-platform/{caseId}/profile/{chatPlatformId}/support-tickets sortOrder', () => {
  async function tickets() {
    const s = await caseWithOwner();
    const profile = await createProfile(s.caseId, 'chat_platform', 'ann#1', true);
    await db()
      .insert(supportTickets)
      .values([
        {
          caseId: s.caseId,
          profileId: profile.id,
          ticketId: 20,
          subject: 'Second',
          ticketCreatedAt: day(2),
          comments: [],
        },
        {
          caseId: s.caseId,
          profileId: profile.id,
          ticketId: 30,
          subject: 'Undated',
          ticketCreatedAt: null,
          comments: [],
        },
        {
          caseId: s.caseId,
          profileId: profile.id,
          ticketId: 10,
          subject: 'First',
          ticketCreatedAt: day(1),
          comments: [],
        },
        {
          caseId: s.caseId,
          profileId: profile.id,
          ticketId: 40,
          subject: 'Third',
          ticketCreatedAt: day(3),
          comments: [],
        },
      ]);
    return async (query: Record<string, string> = {}) => {
      const page = expectData(
        await invoke(routes.listSupportTickets, {
          token: s.owner.accessToken,
          path: { caseId: s.caseId, chatPlatformId: profile.id },
          query,
        }),
      );
      return page.data.map((t: { ticketId: number }) => t.ticketId);
    };
  }

  it('answers oldest first by default and with sortOrder=asc, newest first with sortOrder=desc, undated tickets last', async () => {
    const list = await tickets();
    expect(await list()).toEqual([10, 20, 40, 30]);
    expect(await list({ sortOrder: 'asc' })).toEqual([10, 20, 40, 30]);
    expect(await list({ sortOrder: 'desc' })).toEqual([40, 20, 10, 30]);
  });

  it('pages in the order asked for', async () => {
    const list = await tickets();
    expect(await list({ sortOrder: 'desc', perPage: '2', page: '1' })).toEqual([40, 20]);
    expect(await list({ sortOrder: 'desc', perPage: '2', page: '2' })).toEqual([10, 30]);
  });
});

describe('GET /professional-network/{caseId}/search-messages sortOrder', () => {
  it('answers newest first by default and with sortOrder=desc, oldest first with sortOrder=asc', async () => {
    const s = await caseWithOwner();
    const profile = await createProfile(s.caseId, 'professional_network', 'Ann Lee', true);
    const [conversation] = await db()
      .insert(networkConversations)
      .values({ caseId: s.caseId, profileId: profile.id, externalId: 'c1', title: 'Deal', participants: [] })
      .returning();
    for (const d of [2, 1, 3]) {
      await db()
        .insert(networkMessages)
        .values({
          caseId: s.caseId,
          conversationId: conversation!.id,
          profileId: profile.id,
          externalId: `m${d}`,
          from: 'Ann Lee',
          to: 'Bob Roe',
          date: day(d),
          content: `contract ${d}`,
        });
    }
    const dates = async (query: Record<string, string> = {}) => {
      const page = expectData(
        await invoke(routes.searchNetworkMessages, {
          token: s.owner.accessToken,
          path: { caseId: s.caseId },
          query: { searchText: 'contract', ...query },
        }),
      );
      return page.data.map((m: { date: string }) => Number(m.date.slice(8, 10)));
    };
    expect(await dates()).toEqual([3, 2, 1]);
    expect(await dates({ sortOrder: 'desc' })).toEqual([3, 2, 1]);
    expect(await dates({ sortOrder: 'asc' })).toEqual([1, 2, 3]);
  });
});

describe('GET /admin/report/org-report sortOrder', () => {
  it('answers newest organizations first by default and with sortOrder=desc, oldest first with sortOrder=asc', async () => {
    const admin = await createUser();
    await updateUserRow(admin.id, { isSuperAdmin: true });
    const word = `Sorted${randomBytes(4).toString('hex')}`;
    const names = ['Older', 'Middle', 'Newer'].map((n) => `${word} ${n}`);
    for (const [index, name] of names.entries()) {
      const owner = await createUser({ organizationName: name });
      await db()
        .update(organizations)
        .set({ createdAt: day(index + 1) })
        .where(eq(organizations.id, owner.organizationId));
    }
    const report = async (query: Record<string, string> = {}) => {
      const page = expectData(
        await invoke(routes.getOrganizationReport, { token: admin.accessToken, query: { searchText: word, ...query } }),
      );
      return page.data.map((entry: { organization: { name: string } }) =>
        entry.organization.name.replace(`${word} `, ''),
      );
    };
    expect(await report()).toEqual(['Newer', 'Middle', 'Older']);
    expect(await report({ sortOrder: 'desc' })).toEqual(['Newer', 'Middle', 'Older']);
    expect(await report({ sortOrder: 'asc' })).toEqual(['Older', 'Middle', 'Newer']);
  });
});

describe('extension lists sortOrder', () => {
  it('lists email threads by latest activity, newest first by default, oldest first with sortOrder=asc', async () => {
    const s = await caseWithOwner();
    for (const d of [2, 1, 3]) {
      await db()
        .insert(emailThreads)
        .values({ caseId: s.caseId, rootMessageId: `<t${d}@seed>`, subject: `Thread ${d}`, lastMessageAt: day(d) });
    }
    const subjects = async (query: Record<string, string> = {}) =>
      expectData(
        await invoke(routes.listEmailThreads, { token: s.owner.accessToken, path: { caseId: s.caseId }, query }),
      ).data.map((t: { subject: string }) => t.subject);
    expect(await subjects()).toEqual(['Thread 3', 'Thread 2', 'Thread 1']);
    expect(await subjects({ sortOrder: 'asc' })).toEqual(['Thread 1', 'Thread 2', 'Thread 3']);
  });

  it('lists profiles by name, A to Z by default, Z to A with sortOrder=desc', async () => {
    const s = await caseWithOwner();
    for (const name of ['Bea', 'Abe', 'Cid']) await createProfile(s.caseId, 'chat_platform', name, true);
    const names = async (query: Record<string, string> = {}) =>
      expectData(
        await invoke(routes.listChatProfiles, { token: s.owner.accessToken, path: { caseId: s.caseId }, query }),
      ).data.map((p: { name: string }) => p.name);
    expect(await names()).toEqual(['Abe', 'Bea', 'Cid']);
    expect(await names({ sortOrder: 'desc' })).toEqual(['Cid', 'Bea', 'Abe']);
  });
});
