import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { invitations, organizations } from '../../lib/db/schema';
import { addMember, createUser, emailsTo, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { seatsUsed } from '../harness/organizations';
import { invited } from '../harness/invitations';
import { UNKNOWN_ID } from '../harness/ids';

const ONE_MONTH_AND_A_DAY = 32 * 86_400;

const reject = (orgId: string, body: Record<string, unknown>) =>
  invoke(routes.rejectInvitation, { path: { orgId }, body });

const invitationById = async (id: string) => (await db().select().from(invitations).where(eq(invitations.id, id)))[0]!;

const declinedMail = (to: string, invitee: string) =>
  emailsTo(to).filter((m) => m.subject.startsWith(`${invitee} declined`));

describe('POST /organization/{orgId}/invitation/reject', () => {
  it('marks the invitation rejected, frees its seat and tells the owners and admins with the reason', async () => {
    // Prepare
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    const member = await addMember(owner.organizationId, 'member');
    const { email, row, token } = await invited(owner);
    expect(await seatsUsed(owner)).toBe(4);
    // Act
    const result = await reject(owner.organizationId, {
      token,
      email: email.toUpperCase(),
      reason: 'Joined another firm',
    });
    // Assess
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ statusCode: 200, timestamp: expect.any(String) });
    expect(result.body).not.toHaveProperty('data');
    expect(await invitationById(row.id)).toMatchObject({ status: 'rejected', rejectionReason: 'Joined another firm' });
    expect(await seatsUsed(owner)).toBe(3);
    const [organization] = await db().select().from(organizations).where(eq(organizations.id, owner.organizationId));
    for (const recipient of [owner, admin]) {
      const mail = declinedMail(recipient.email, email);
      expect(mail).toHaveLength(1);
      expect(mail[0]!.subject).toBe(`${email} declined the invitation to ${organization!.name}`);
      expect(mail[0]!.text).toContain(email);
      expect(mail[0]!.text).toContain('Joined another firm');
    }
    expect(declinedMail(member.email, email)).toHaveLength(0);
  });

  it('notifies without a reason line when none is given', async () => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    expectData(await reject(owner.organizationId, { token, email }));
    expect(await invitationById(row.id)).toMatchObject({ status: 'rejected', rejectionReason: null });
    const [mail] = declinedMail(owner.email, email);
    expect(mail!.text).not.toContain('Reason given');
  });

  it('answers 404 for an unknown organization', async () => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    expectError(await reject(UNKNOWN_ID, { token, email }), 404, 'NOT_FOUND');
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending' });
  });

  it("answers 404 for a token sent to another organization's path", async () => {
    const owner = await createUser();
    const other = await createUser();
    const { email, row, token } = await invited(owner);
    expectError(await reject(other.organizationId, { token, email }), 404, 'NOT_FOUND');
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending' });
    expect(declinedMail(other.email, email)).toHaveLength(0);
  });

  it.each([
    ['a wrong token', (i: { email: string; token: string }) => ({ token: `${i.token}x`, email: i.email })],
    [
      'a token sent with another email',
      (i: { email: string; token: string }) => ({ token: i.token, email: uniqueEmail('other') }),
    ],
  ])('answers 404 for %s', async (_label, body) => {
    const owner = await createUser();
    const invitation = await invited(owner);
    expectError(await reject(owner.organizationId, body(invitation)), 404, 'NOT_FOUND');
    expect(await invitationById(invitation.row.id)).toMatchObject({ status: 'pending' });
    expect(declinedMail(owner.email, invitation.email)).toHaveLength(0);
  });

  it('answers 400 TOKEN_EXPIRED a month after the invitation was sent', async () => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    testClock.advance(ONE_MONTH_AND_A_DAY);
    expectError(await reject(owner.organizationId, { token, email }), 400, 'TOKEN_EXPIRED');
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending' });
  });

  it('answers 400 INVITATION_NOT_PENDING when rejecting twice, notifying once', async () => {
    const owner = await createUser();
    const { email, token } = await invited(owner);
    expectData(await reject(owner.organizationId, { token, email, reason: 'first' }));
    expectError(await reject(owner.organizationId, { token, email, reason: 'second' }), 400, 'INVITATION_NOT_PENDING');
    expect(declinedMail(owner.email, email)).toHaveLength(1);
  });

  it('answers 400 INVITATION_NOT_PENDING after the invitation was accepted', async () => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    const body = { token, email, name: 'Ann Accepted', password: 'a-long-password' };
    expectData(await invoke(routes.acceptInvitation, { path: { orgId: owner.organizationId }, body }), 201);
    expectError(await reject(owner.organizationId, { token, email }), 400, 'INVITATION_NOT_PENDING');
    expect(await invitationById(row.id)).toMatchObject({ status: 'accepted' });
  });

  it.each([
    [{}, ['body.token', 'body.email']],
    [{ token: 'x', email: 'nope' }, ['body.email']],
    [{ token: ['x'], email: 'a@example.com' }, ['body.token']],
    [{ token: 'x', email: 'a@example.com', reason: 5 }, ['body.reason']],
    [{ token: 'x', email: 'a@example.com', reason: 'r'.repeat(1001) }, ['body.reason']],
    [{ token: 'x', email: 'a@example.com', reason: 'not\u0000now' }, ['body.reason']],
  ])('answers 400 VALIDATION_FAILED naming the field for %j', async (body, fields) => {
    const owner = await createUser();
    expectError(await reject(owner.organizationId, body), 400, 'VALIDATION_FAILED', fields);
  });

  it('answers 404 NOT_FOUND for an orgId that is not a uuid, as for an unknown organization', async () => {
    expectError(await reject('1234', { token: 'x', email: 'a@example.com' }), 404, 'NOT_FOUND');
  });
});

describeSecurity(routes.rejectInvitation, {
  request: async ({ owner, organizationId }) => {
    const { email, token } = await invited(owner);
    return { path: { orgId: organizationId }, body: { token, email } };
  },
});
