import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { grantCredits } from '../../lib/billing/admin';
import { db } from '../../lib/db/client';
import { invitations, organizationMembers, organizations } from '../../lib/db/schema';
import {
  createCaseRow,
  createUser,
  emailsTo,
  signIn,
  type TestUser,
  tokenFromEmail,
  uniqueEmail,
} from '../harness/actors';
import { auditEventsOf } from '../harness/audit';
import { expectData, invoke } from '../harness/invoke';

/**
 * Issue 31 (2): when the rightful owner of an address takes over the unverified account registered
 * with it, what the earlier holder built with that account ends: its memberships, the organizations
 * only it was in (nothing paid), its pending invitations; organizations with other members keep
 * running under the longest-standing admin, who is told by email.
 */

const INVITED = 'You are invited to join';
const OWNER_IP = '203.0.113.77';
const OWNER_AGENT = 'Rightful Owner Browser/1.0';

const invite = (caller: { accessToken: string }, orgId: string, body: unknown) =>
  invoke(routes.inviteUsers, { token: caller.accessToken, path: { orgId }, body });

const membersOf = (orgId: string) =>
  db().select().from(organizationMembers).where(eq(organizationMembers.organizationId, orgId));

const organizationRow = async (id: string) =>
  (await db().select().from(organizations).where(eq(organizations.id, id)))[0];

const verify = async (user: TestUser) =>
  expectData(
    await invoke(routes.verifyEmail, {
      body: { token: tokenFromEmail(user.email, 'Verify your email address'), email: user.email },
    }),
  );

const newOrganization = async (user: TestUser) =>
  expectData(
    await invoke(routes.createOrganization, {
      token: user.accessToken,
      body: { name: `Squat ${randomBytes(4).toString('hex')}` },
    }),
    201,
  ).organization.id as string;

/**
 * The squatter registers the partner's address without owning the mailbox (their organization
 * comes with it), and brings in their second, verified account as admin.
 */
async function squattedAddress() {
  const squat = await createUser({ email: uniqueEmail('partner').replace('@example.com', '@lawfirm.test') });
  const second = await createUser();
  await verify(second);
  expectData(await invite(squat, squat.organizationId, { emails: [second.email], role: 'admin' }), 201);
  expectData(
    await invoke(routes.acceptInvitation, {
      path: { orgId: squat.organizationId },
      body: { token: tokenFromEmail(second.email, INVITED), email: second.email },
    }),
    201,
  );
  return { squat, second };
}

/** The real partner follows an invitation to the address and takes the account over; then signs in. */
async function takeOver(squat: TestUser) {
  const firm = await createUser();
  expectData(await invite(firm, firm.organizationId, { emails: [squat.email], role: 'employee' }), 201);
  const data = expectData(
    await invoke(routes.acceptInvitation, {
      path: { orgId: firm.organizationId },
      body: {
        token: tokenFromEmail(squat.email, INVITED),
        email: squat.email,
        name: 'Real Partner',
        password: 'the-partners-password',
      },
      ip: OWNER_IP,
      headers: { 'user-agent': OWNER_AGENT },
    }),
    201,
  );
  expect(data.login).not.toBeNull();
  const partner = await signIn(
    { ...squat, password: 'the-partners-password' },
    { ip: OWNER_IP, userAgent: OWNER_AGENT },
  );
  return { firm, partner };
}

describe('a takeover ends what the earlier holder of the account built', () => {
  it("leaves the squatter's organization, which keeps running under its admin, told by email", async () => {
    // Prepare
    const { squat, second } = await squattedAddress();
    const roleIn = async (user: TestUser, orgId: string) =>
      expectData(await invoke(routes.getProfile, { token: user.accessToken })).organizations.find(
        (o: any) => o.organization.id === orgId,
      )?.permission.role;
    expect(await roleIn(second, squat.organizationId)).toBe('admin');
    // Act
    const { partner } = await takeOver(squat);
    // Assess: the account is no member; the second account is its owner now, and was told
    const members = await membersOf(squat.organizationId);
    expect(members.map((m) => m.userId)).not.toContain(squat.id);
    expect(members).toEqual([expect.objectContaining({ userId: second.id, role: 'owner' })]);
    expect(emailsTo(second.email).filter((m) => m.subject.includes('You are now the owner of'))).toHaveLength(1);
    expect(await roleIn(second, squat.organizationId)).toBe('owner');
    const mine = expectData(await invoke(routes.listMyOrganizations, { token: partner.accessToken }));
    expect(mine.data.map((o: any) => o.organization.id)).not.toContain(squat.organizationId);
  });

  it("never shows the rightful owner's sign-ins to the squatter's second account, in any trail", async () => {
    const { squat, second } = await squattedAddress();
    const { partner } = await takeOver(squat);
    // The partner signs in and refreshes again later: none of it reaches the squatter's organization.
    expectData(await invoke(routes.refreshToken, { body: { refreshToken: partner.refreshToken }, ip: OWNER_IP }));
    const readable = expectData(await invoke(routes.listMyOrganizations, { token: second.accessToken }));
    const orgIds: string[] = readable.data.map((o: any) => o.organization.id);
    expect(orgIds).toContain(squat.organizationId);
    for (const orgId of orgIds) {
      const trail = expectData(
        await invoke(routes.listAuditEvents, {
          token: second.accessToken,
          path: { orgId },
          query: { pageSize: '100' },
        }),
      );
      for (const event of trail.data) {
        expect(event.ip ?? null).not.toBe(OWNER_IP);
        expect(event.userAgent ?? null).not.toBe(OWNER_AGENT);
      }
    }
    expect(await auditEventsOf(squat.organizationId, 'auth.signed_in')).not.toContainEqual(
      expect.objectContaining({ ip: OWNER_IP }),
    );
  });

  it('deletes an organization the squatter created with no other member and nothing paid', async () => {
    const { squat } = await squattedAddress();
    const lonely = await newOrganization(squat);
    await takeOver(squat);
    expect(await organizationRow(lonely)).toBeUndefined();
    expect(await membersOf(lonely)).toEqual([]);
  });

  it('keeps an organization with no other member but something paid or evidence, without the account', async () => {
    const { squat } = await squattedAddress();
    const paid = await newOrganization(squat);
    await grantCredits(paid, 500, 'test credit');
    const withCase = await newOrganization(squat);
    await createCaseRow(withCase);
    await takeOver(squat);
    for (const orgId of [paid, withCase]) {
      expect(await organizationRow(orgId)).toBeDefined();
      expect((await membersOf(orgId)).map((m) => m.userId)).not.toContain(squat.id);
    }
  });

  it('withdraws the invitations the squatter sent', async () => {
    const { squat } = await squattedAddress();
    const invitee = uniqueEmail('invitee');
    expectData(await invite(squat, squat.organizationId, { emails: [invitee], role: 'admin' }), 201);
    await takeOver(squat);
    const left = await db()
      .select()
      .from(invitations)
      .where(and(eq(invitations.organizationId, squat.organizationId), eq(invitations.email, invitee)));
    expect(left).toEqual([]);
    const withdrawn = await auditEventsOf(squat.organizationId, 'organization.invitation.deleted');
    expect(withdrawn).toEqual([
      expect.objectContaining({
        actorType: 'system',
        ip: null,
        userAgent: null,
        metadata: expect.objectContaining({ email: invitee }),
      }),
    ]);
  });

  it("keeps memberships from before an admin changed the account's address, ends those gained after", async () => {
    // Prepare: a verified colleague of a firm, in no other organization, whose address the firm's
    // owner changes to one the colleague does not own; with it, someone creates an organization.
    const firm = await createUser();
    const colleague = await createUser();
    await verify(colleague);
    await db().delete(organizations).where(eq(organizations.id, colleague.organizationId));
    await db()
      .insert(organizationMembers)
      .values({ organizationId: firm.organizationId, userId: colleague.id, role: 'member' });
    const address = uniqueEmail('moved');
    expectData(
      await invoke(routes.updateOrganizationUsers, {
        token: firm.accessToken,
        path: { orgId: firm.organizationId },
        body: { users: [{ userId: colleague.id, email: address }] },
      }),
    );
    const moved = await signIn({ ...colleague, email: address });
    const later = await newOrganization(moved);
    // Act: the owner of that address takes the account over
    await takeOver(moved);
    // Assess
    expect(await membersOf(firm.organizationId)).toContainEqual(
      expect.objectContaining({ userId: colleague.id, role: 'member' }),
    );
    expect(await organizationRow(later)).toBeUndefined();
  });

  it('keeps the memberships and the organization of an account that was verified', async () => {
    const owner = await createUser();
    await verify(owner);
    const other = await newOrganization(owner);
    // Nothing to take over: a verified account joins.
    const firm = await createUser();
    expectData(await invite(firm, firm.organizationId, { emails: [owner.email] }), 201);
    expectData(
      await invoke(routes.acceptInvitation, {
        path: { orgId: firm.organizationId },
        body: { token: tokenFromEmail(owner.email, INVITED), email: owner.email },
      }),
      201,
    );
    expect(await membersOf(other)).toEqual([expect.objectContaining({ userId: owner.id, role: 'owner' })]);
    expect(await membersOf(owner.organizationId)).toEqual([expect.objectContaining({ userId: owner.id })]);
  });
});
