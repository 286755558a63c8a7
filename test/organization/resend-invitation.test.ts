import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { addMonths, now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { invitations, organizations } from '../../lib/db/schema';
import { hashToken } from '../../lib/secrets';
import { addMember, createUser, emailsTo, signIn, tokenFromEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { seatsUsed } from '../harness/organizations';
import { INVITED, invited } from '../harness/invitations';
import { UNKNOWN_ID } from '../harness/ids';

const DAY = 86_400;

const resend = (caller: { accessToken?: string }, orgId: string, invitationId: string) =>
  invoke(routes.resendInvitation, { token: caller.accessToken, path: { orgId, invitationId } });

const invitationById = async (id: string) => (await db().select().from(invitations).where(eq(invitations.id, id)))[0]!;

const accept = (orgId: string, email: string, token: string) =>
  invoke(routes.acceptInvitation, {
    path: { orgId },
    body: { token, email, name: 'Invitee', password: 'a-long-password' },
  });

describe('POST /organization/{orgId}/invitation/{invitationId}/resend', () => {
  it('issues a new one-month token, emails it, and the old token stops working; no new seat is taken', async () => {
    // Prepare
    let owner = await createUser();
    const { email, row, token: oldToken } = await invited(owner);
    testClock.advance(10 * DAY);
    owner = await signIn(owner);
    testClock.freeze();
    // Act
    const result = await resend(owner, owner.organizationId, row.id);
    // Assess
    expect(expectData(result, 201)).toEqual({ message: `Invitation sent again to ${email}` });
    const after = await invitationById(row.id);
    expect(after.status).toBe('pending');
    expect(after.expiresAt.toISOString()).toBe(addMonths(now(), 1).toISOString());
    expect(after.expiresAt.getTime()).toBeGreaterThan(row.expiresAt.getTime());
    const [organization] = await db().select().from(organizations).where(eq(organizations.id, owner.organizationId));
    const mail = emailsTo(email);
    expect(mail.map((m) => m.subject)).toEqual([
      `${INVITED} ${organization!.name}`,
      `${INVITED} ${organization!.name}`,
    ]);
    const newToken = tokenFromEmail(email, INVITED);
    expect(newToken).not.toBe(oldToken);
    expect(after.tokenHash).toBe(hashToken(newToken));
    expect(await seatsUsed(owner)).toBe(2);
    expectError(await accept(owner.organizationId, email, oldToken), 404, 'NOT_FOUND');
    expectData(await accept(owner.organizationId, email, newToken), 201);
  });

  it('records who re-sent it', async () => {
    const owner = await createUser();
    const colleague = await addMember(owner.organizationId, 'member');
    const { row } = await invited(owner);
    expectData(await resend(colleague, owner.organizationId, row.id), 201);
    expect((await invitationById(row.id)).invitedById).toBe(colleague.id);
  });

  it('puts a rejected invitation back to pending, taking its seat again', async () => {
    // Prepare
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    expectData(
      await invoke(routes.rejectInvitation, {
        path: { orgId: owner.organizationId },
        body: { token, email, reason: 'busy' },
      }),
    );
    expect(await seatsUsed(owner)).toBe(1);
    // Act
    expectData(await resend(owner, owner.organizationId, row.id), 201);
    // Assess
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending', rejectionReason: null });
    expect(await seatsUsed(owner)).toBe(2);
    const renewed = tokenFromEmail(email, INVITED);
    expect(renewed).not.toBe(token);
    expectData(await accept(owner.organizationId, email, renewed), 201);
  });

  it('answers 403 SEAT_LIMIT_REACHED when a rejected invitation would need a seat the plan no longer has', async () => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    expectData(
      await invoke(routes.rejectInvitation, { path: { orgId: owner.organizationId }, body: { token, email } }),
    );
    await Promise.all(Array.from({ length: 4 }, () => invited(owner)));
    expect(await seatsUsed(owner)).toBe(5);
    expectError(await resend(owner, owner.organizationId, row.id), 403, 'SEAT_LIMIT_REACHED');
    expect(await invitationById(row.id)).toMatchObject({ status: 'rejected' });
    expect(emailsTo(email)).toHaveLength(1);
  });

  it('renews an expired invitation, which takes a seat again', async () => {
    let owner = await createUser();
    const { email, row } = await invited(owner);
    testClock.advance(32 * DAY);
    owner = await signIn(owner);
    expect(await seatsUsed(owner)).toBe(1);
    expectData(await resend(owner, owner.organizationId, row.id), 201);
    expect((await invitationById(row.id)).expiresAt.getTime()).toBeGreaterThan(now().getTime());
    expect(await seatsUsed(owner)).toBe(2);
    expectData(await accept(owner.organizationId, email, tokenFromEmail(email, INVITED)), 201);
  });

  it('answers 400 INVITATION_NOT_PENDING for an accepted invitation and sends nothing', async () => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    expectData(await accept(owner.organizationId, email, token), 201);
    expectError(await resend(owner, owner.organizationId, row.id), 400, 'INVITATION_NOT_PENDING');
    expect(await invitationById(row.id)).toMatchObject({ status: 'accepted' });
    expect(emailsTo(email).filter((m) => m.subject.startsWith(INVITED))).toHaveLength(1);
  });

  it('answers 404 for an unknown invitation', async () => {
    const owner = await createUser();
    expectError(await resend(owner, owner.organizationId, UNKNOWN_ID), 404, 'NOT_FOUND');
  });

  it("answers 404 for another organization's invitation and sends nothing", async () => {
    const owner = await createUser();
    const other = await createUser();
    const { email, row } = await invited(other);
    const result = await resend(owner, owner.organizationId, row.id);
    expectError(result, 404, 'NOT_FOUND');
    expect(result.body.data).toBeUndefined();
    expect(emailsTo(email)).toHaveLength(1);
    expect((await invitationById(row.id)).tokenHash).toBe(row.tokenHash);
  });

  it('answers 403 NOT_A_MEMBER for an orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(
      await invoke(routes.resendInvitation, {
        token: owner.accessToken,
        path: { orgId: 'not-a-uuid', invitationId: UNKNOWN_ID },
      }),
      403,
      'NOT_A_MEMBER',
    );
  });

  it('answers 404 NOT_FOUND for an invitationId that is not a uuid, as for an unknown invitation', async () => {
    const owner = await createUser();
    expectError(
      await invoke(routes.resendInvitation, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId, invitationId: 'nope' },
      }),
      404,
      'NOT_FOUND',
    );
  });

  it.each([
    [{ orgId: 'o'.repeat(201), invitationId: UNKNOWN_ID }, ['path.orgId']],
    [{ orgId: UNKNOWN_ID, invitationId: 'i'.repeat(201) }, ['path.invitationId']],
  ])('answers 400 VALIDATION_FAILED for path %j (an id over 200 characters)', async (path, fields) => {
    const owner = await createUser();
    expectError(
      await invoke(routes.resendInvitation, { token: owner.accessToken, path }),
      400,
      'VALIDATION_FAILED',
      fields,
    );
  });
});

// Each refusal leaves the invitee with the one invitation email.
const invitees = new Map<string, string>();
describeSecurity(routes.resendInvitation, {
  request: async ({ owner, organizationId }) => {
    const { email, row } = await invited(owner);
    invitees.set(row.id, email);
    return { path: { orgId: organizationId, invitationId: row.id } };
  },
  unchanged: async (_actor, request) => expect(emailsTo(invitees.get(request.path!.invitationId!)!)).toHaveLength(1),
});
