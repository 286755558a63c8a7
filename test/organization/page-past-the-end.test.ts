import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { organizationMembers } from '../../lib/db/schema';
import { createUser, type TestUser, tokenFromEmail, uniqueEmail } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';

/**
 * Issue 13: on the invitation and member lists `data` is null only when nothing matches at all
 * (`total: 0`); a page past the end of a list that has records answers `data: []` and its total.
 */

const invite = async (inviter: TestUser, email: string) =>
  expectData(
    await invoke(routes.inviteUsers, {
      token: inviter.accessToken,
      path: { orgId: inviter.organizationId },
      body: { emails: [email] },
    }),
    201,
  );

describe('a page past the end of a non-empty list', () => {
  it('GET /organization/invitations answers data [] with the total, and null only when nothing matches', async () => {
    const owner = await createUser();
    for (const name of ['one', 'two']) await invite(owner, uniqueEmail(name));
    const list = async (query: Record<string, string>) =>
      expectData(
        await invoke(routes.listInvitations, { token: owner.accessToken, organization: owner.organizationId, query }),
      );
    expect(await list({ page: '3', perPage: '1' })).toEqual({
      total: 2,
      page: 3,
      perPage: 1,
      totalPages: 2,
      nextPage: null,
      previousPage: 2,
      data: [],
    });
    expect(await list({ skip: '5', limit: '10' })).toMatchObject({
      total: 2,
      skip: 5,
      limit: 10,
      nextPage: null,
      data: [],
    });
    expect(await list({ status: 'accepted', page: '3' })).toMatchObject({ total: 0, data: null });
  });

  it('GET /organization/{orgId}/members answers data [] with the total, and null only when nothing matches', async () => {
    const owner = await createUser();
    const member = await createUser();
    await db()
      .insert(organizationMembers)
      .values({ organizationId: owner.organizationId, userId: member.id, role: 'member' });
    const list = async (query: Record<string, string>) =>
      expectData(
        await invoke(routes.listMembers, {
          token: owner.accessToken,
          path: { orgId: owner.organizationId },
          organization: owner.organizationId,
          query,
        }),
      );
    expect(await list({ page: '2' })).toEqual({
      total: 2,
      page: 2,
      perPage: 10,
      totalPages: 1,
      nextPage: null,
      previousPage: 1,
      data: [],
    });
    expect(await list({ skip: '2', limit: '1' })).toMatchObject({ total: 2, nextPage: null, data: [] });
    expect(await list({ role: 'client', page: '2' })).toMatchObject({ total: 0, data: null });
  });

  it('GET /organization/pending-invitations answers data [] with the total, and null only when nothing matches', async () => {
    const invitee = await createUser();
    expectData(
      await invoke(routes.verifyEmail, {
        body: { token: tokenFromEmail(invitee.email, 'Verify your email address'), email: invitee.email },
      }),
    );
    await invite(await createUser(), invitee.email);
    const list = async (query: Record<string, string>) =>
      expectData(await invoke(routes.listPendingInvitations, { token: invitee.accessToken, query }));
    expect(await list({ page: '2' })).toEqual({
      total: 1,
      page: 2,
      perPage: 10,
      totalPages: 1,
      nextPage: null,
      previousPage: 1,
      data: [],
    });
    expect(await list({ userRole: 'owner', page: '2' })).toMatchObject({ total: 0, data: null });
  });
});
