import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { invitations } from '../../lib/db/schema';
import { addMember, createUser, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { seatsUsed } from '../harness/organizations';
import { invited } from '../harness/invitations';
import { UNKNOWN_ID } from '../harness/ids';

const deleteInvitation = (caller: { accessToken?: string }, orgId: string, invitationId: string) =>
  invoke(routes.deleteInvitation, { token: caller.accessToken, path: { orgId, invitationId } });

const invitationById = async (id: string) => (await db().select().from(invitations).where(eq(invitations.id, id)))[0];

describe('DELETE /organization/{orgId}/invitation/{invitationId}', () => {
  it('deletes a pending invitation, frees its seat, and its token no longer accepts', async () => {
    // Prepare
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    expect(await seatsUsed(owner)).toBe(2);
    // Act
    const result = await deleteInvitation(owner, owner.organizationId, row.id);
    // Assess
    expect(expectData(result)).toEqual({ message: `Invitation to ${email} deleted` });
    expect(await invitationById(row.id)).toBeUndefined();
    expect(await seatsUsed(owner)).toBe(1);
    const accept = await invoke(routes.acceptInvitation, {
      path: { orgId: owner.organizationId },
      body: { token, email, name: 'Too Late', password: 'a-long-password' },
    });
    expectError(accept, 404, 'NOT_FOUND');
  });

  it('lets the freed seat be used again', async () => {
    const owner = await createUser();
    const pending = await Promise.all([invited(owner), invited(owner), invited(owner), invited(owner)]);
    const next = uniqueEmail('next');
    const inviteNext = () =>
      invoke(routes.inviteUsers, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId },
        body: { emails: [next] },
      });
    expectError(await inviteNext(), 403, 'SEAT_LIMIT_REACHED');
    expectData(await deleteInvitation(owner, owner.organizationId, pending[0]!.row.id));
    expectData(await inviteNext(), 201);
  });

  it('answers 404 for an unknown invitation', async () => {
    const owner = await createUser();
    expectError(await deleteInvitation(owner, owner.organizationId, UNKNOWN_ID), 404, 'NOT_FOUND');
  });

  it("answers 404 for another organization's invitation and leaves it alone", async () => {
    const owner = await createUser();
    const other = await createUser();
    const { row } = await invited(other);
    const result = await deleteInvitation(owner, owner.organizationId, row.id);
    expectError(result, 404, 'NOT_FOUND');
    expect(result.body.data).toBeUndefined();
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending' });
  });

  it.each([
    ['accepted', 'accept'],
    ['rejected', 'reject'],
  ] as const)('answers 400 INVITATION_NOT_PENDING for an %s invitation and keeps it', async (status, action) => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    const path = { orgId: owner.organizationId };
    if (action === 'accept') {
      expectData(
        await invoke(routes.acceptInvitation, {
          path,
          body: { token, email, name: 'Ann', password: 'a-long-password' },
        }),
        201,
      );
    } else {
      expectData(await invoke(routes.rejectInvitation, { path, body: { token, email } }));
    }
    expectError(await deleteInvitation(owner, owner.organizationId, row.id), 400, 'INVITATION_NOT_PENDING');
    expect(await invitationById(row.id)).toMatchObject({ status });
  });

  it('answers 403 NOT_A_MEMBER for an orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(await deleteInvitation(owner, 'not-a-uuid', UNKNOWN_ID), 403, 'NOT_A_MEMBER');
  });

  it('answers 404 NOT_FOUND for an invitationId that is not a uuid, as for an unknown invitation', async () => {
    const owner = await createUser();
    expectError(await deleteInvitation(owner, owner.organizationId, '42'), 404, 'NOT_FOUND');
  });

  it.each([
    [{ orgId: 'o'.repeat(201), invitationId: UNKNOWN_ID }, ['path.orgId']],
    [{ orgId: UNKNOWN_ID, invitationId: 'i'.repeat(201) }, ['path.invitationId']],
  ])('answers 400 VALIDATION_FAILED for path %j (an id over 200 characters)', async (path, fields) => {
    const owner = await createUser();
    expectError(
      await invoke(routes.deleteInvitation, { token: owner.accessToken, path }),
      400,
      'VALIDATION_FAILED',
      fields,
    );
  });
});

describeSecurity(routes.deleteInvitation, {
  request: async ({ owner, organizationId }) => ({
    path: { orgId: organizationId, invitationId: (await invited(owner)).row.id },
  }),
  unchanged: async (_actor, request) => expect(await invitationById(request.path!.invitationId!)).toBeDefined(),
});

describe('DELETE /organization/{orgId}/invitation/{invitationId} security', () => {
  it('lets a plain member delete (member role or above)', async () => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const { row } = await invited(owner);
    expectData(await deleteInvitation(member, owner.organizationId, row.id));
    expect(await invitationById(row.id)).toBeUndefined();
  });
});
