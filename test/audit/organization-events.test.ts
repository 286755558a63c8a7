import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { eventHash, GENESIS_HASH } from '../../lib/audit';
import { db } from '../../lib/db/client';
import { caseAccess, invitations, organizationMembers, organizations } from '../../lib/db/schema';
import type { RouteDefinition } from '../../lib/http/route';
import {
  addMember,
  createCaseRow,
  createUser,
  type TestUser,
  tokenFromEmail,
  uniqueEmail,
  updateUserRow,
} from '../harness/actors';
import { expectData, expectError, type InvokeOptions, type InvokeResult, invoke } from '../harness/invoke';
import { type AuditRow, invokeAudited } from '../harness/audit';
import { UNKNOWN_ID } from '../harness/ids';

/**
 * The audit events of the organization, member and invitation routes: each successful request
 * writes exactly its events (one per change, none for a change that changes nothing) with its
 * action, target, actor and organization, committed with the change; a refused one writes none.
 */

const INVITED = 'You are invited to join';
const IP = '198.51.100.77';

/** Invokes `route` (from a fixed client IP) and answers what that request wrote to the audit trail, each hash checked. */
async function send(
  route: RouteDefinition,
  options: InvokeOptions = {},
): Promise<{ result: InvokeResult; events: AuditRow[] }> {
  const { result, events } = await invokeAudited(route, { ip: IP, ...options });
  for (const event of events) expect(eventHash(event)).toBe(event.hash);
  return { result, events };
}

/** The sign-in session behind an access token (its `sid` claim). */
const sessionOf = (accessToken: string) => decodeJwt(accessToken).sid as string;

/** The actor columns of an event by `user` through the session of their access token. */
const byUser = (user: TestUser) => ({ actorType: 'user', actorUserId: user.id, tokenId: sessionOf(user.accessToken) });

/** The columns an event is checked on. */
const shape = (event: AuditRow) => ({
  action: event.action,
  organizationId: event.organizationId,
  actorType: event.actorType,
  actorUserId: event.actorUserId,
  tokenId: event.tokenId,
  caseId: event.caseId,
  targetType: event.targetType,
  targetId: event.targetId,
  metadata: event.metadata,
});

const uniqueName = (prefix: string) => `${prefix} ${randomBytes(5).toString('hex')}`;

/** Invites `emails` into `orgId` (the caller's own organization by default). */
async function invite(caller: TestUser, emails: string[], role?: string, orgId = caller.organizationId) {
  return send(routes.inviteUsers, {
    token: caller.accessToken,
    path: { orgId },
    body: role ? { emails, role } : { emails },
  });
}

const invitationOf = async (orgId: string, email: string) =>
  (
    await db()
      .select()
      .from(invitations)
      .where(and(eq(invitations.organizationId, orgId), eq(invitations.email, email.toLowerCase())))
  )[0]!;

/** A pending invitation of `owner`'s organization and its emailed token. */
async function invited(owner: TestUser, role?: string) {
  const email = uniqueEmail('invitee');
  expectData((await invite(owner, [email], role)).result, 201);
  return { email, row: await invitationOf(owner.organizationId, email), token: tokenFromEmail(email, INVITED) };
}

/** A member of `orgId` who belongs to no other organization (the one they registered with is gone). */
async function soleMember(orgId: string, role: (typeof organizationMembers.$inferInsert)['role']): Promise<TestUser> {
  const user = await createUser();
  await db().delete(organizations).where(eq(organizations.id, user.organizationId));
  await db().insert(organizationMembers).values({ organizationId: orgId, userId: user.id, role });
  return user;
}

describe('organization events', () => {
  describe('createOrganization', () => {
    it("records organization.created as the organization's first event, naming the invitations sent with it", async () => {
      // Prepare
      const owner = await createUser();
      const [first, second] = [uniqueEmail('first'), uniqueEmail('second')];
      const name = uniqueName('Audited Firm');
      // Act
      const { result, events } = await send(routes.createOrganization, {
        token: owner.accessToken,
        body: { name, inviteEmails: [first, second] },
      });
      // Assess
      const organizationId = expectData(result, 201).organization.id as string;
      const [firstRow, secondRow] = [
        await invitationOf(organizationId, first),
        await invitationOf(organizationId, second),
      ];
      expect(events.map(shape)).toEqual([
        {
          action: 'organization.created',
          organizationId,
          ...byUser(owner),
          caseId: null,
          targetType: 'organization',
          targetId: organizationId,
          metadata: {
            name,
            slug: expect.any(String),
            invitations: [
              { id: firstRow.id, email: first, role: 'member' },
              { id: secondRow.id, email: second, role: 'member' },
            ],
            invitationsNotSent: [],
          },
        },
      ]);
      expect(events[0]).toMatchObject({ sequence: 1, prevHash: GENESIS_HASH, ip: IP, userAgent: 'vitest' });
    });

    it('records nothing when the name is taken', async () => {
      const owner = await createUser({ organizationName: uniqueName('Taken') });
      const [existing] = await db().select().from(organizations).where(eq(organizations.id, owner.organizationId));
      const { result, events } = await send(routes.createOrganization, {
        token: owner.accessToken,
        body: { name: existing!.name },
      });
      expectError(result, 400, 'ORGANIZATION_NAME_TAKEN');
      expect(events).toEqual([]);
    });
  });

  describe('updateOrganization', () => {
    const patch = (caller: TestUser, orgId: string, body: Record<string, unknown>) =>
      send(routes.updateOrganization, { token: caller.accessToken, path: { orgId }, body });

    it('records the fields that changed with their new values, free-form ones by name only', async () => {
      // Prepare
      const owner = await createUser();
      const name = uniqueName('Renamed Firm');
      // Act
      const { result, events } = await patch(owner, owner.organizationId, {
        name,
        city: 'Boston',
        metadata: { crmKey: 'do-not-log-me' },
        bankLinkingTermsAccepted: true,
      });
      // Assess
      const slug = expectData(result, 201).organization.slug;
      expect(events.map(shape)).toEqual([
        {
          action: 'organization.updated',
          organizationId: owner.organizationId,
          ...byUser(owner),
          caseId: null,
          targetType: 'organization',
          targetId: owner.organizationId,
          metadata: {
            fields: expect.arrayContaining(['name', 'slug', 'city', 'metadata', 'bankLinkingTermsAccepted']),
            changes: { name, slug, city: 'Boston', bankLinkingTermsAccepted: true },
          },
        },
      ]);
      expect((events[0]!.metadata.fields as string[]).sort()).toEqual(
        ['bankLinkingTermsAccepted', 'city', 'metadata', 'name', 'slug'].sort(),
      );
      expect(JSON.stringify(events[0])).not.toContain('do-not-log-me');
    });

    it('records nothing when nothing differs: an empty body, the same values, keys in another order', async () => {
      // Prepare
      const owner = await createUser();
      const values = {
        city: 'Lyon',
        phone: ['+33 1 23 45 67 89'],
        address: { line1: '1 rue de la Paix', city: 'Lyon', country: 'FR' },
        bankLinkingTermsAccepted: true,
      };
      expect((await patch(owner, owner.organizationId, values)).events).toHaveLength(1);
      const [current] = await db().select().from(organizations).where(eq(organizations.id, owner.organizationId));
      // Act
      const sent = [
        await patch(owner, owner.organizationId, {}),
        await patch(owner, owner.organizationId, values),
        await patch(owner, owner.organizationId, {
          name: current!.name,
          address: { country: 'FR', city: 'Lyon', line1: '1 rue de la Paix' },
          bankLinkingTermsAccepted: true,
        }),
      ];
      // Assess
      for (const { result, events } of sent) {
        expectData(result, 201);
        expect(events).toEqual([]);
      }
      const [after] = await db().select().from(organizations).where(eq(organizations.id, owner.organizationId));
      expect(after!.updatedAt).toEqual(current!.updatedAt);
    });

    it('records only the field that changed among those sent again', async () => {
      const owner = await createUser();
      await patch(owner, owner.organizationId, { city: 'Paris', country: 'FR' });
      const { events } = await patch(owner, owner.organizationId, { city: 'Paris', country: 'BE' });
      expect(events.map((e) => e.metadata)).toEqual([{ fields: ['country'], changes: { country: 'BE' } }]);
    });

    it('records nothing when refused: a member (403), a taken name (400)', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const other = await createUser({ organizationName: uniqueName('Other Firm') });
      const [taken] = await db().select().from(organizations).where(eq(organizations.id, other.organizationId));
      const byMember = await patch(member, owner.organizationId, { city: 'Rome' });
      expectError(byMember.result, 403, 'INSUFFICIENT_ROLE');
      expect(byMember.events).toEqual([]);
      const takenName = await patch(owner, owner.organizationId, { name: taken!.name, city: 'Rome' });
      expectError(takenName.result, 400, 'ORGANIZATION_NAME_TAKEN');
      expect(takenName.events).toEqual([]);
    });
  });

  describe('inviteUsers', () => {
    it('records organization.member.invited once per invitation, its target the invitation', async () => {
      // Prepare
      const owner = await createUser();
      const [first, second] = [uniqueEmail('first'), uniqueEmail('second')];
      // Act
      const { result, events } = await invite(owner, [first, second.toUpperCase()], 'employee');
      // Assess
      expectData(result, 201);
      const rows = [await invitationOf(owner.organizationId, first), await invitationOf(owner.organizationId, second)];
      expect(events.map(shape)).toEqual(
        rows.map((row) => ({
          action: 'organization.member.invited',
          organizationId: owner.organizationId,
          ...byUser(owner),
          caseId: null,
          targetType: 'invitation',
          targetId: row.id,
          metadata: { email: row.email, role: 'employee' },
        })),
      );
      // Never the token, nor its hash.
      for (const row of rows) expect(JSON.stringify(events)).not.toContain(row.tokenHash);
      expect(JSON.stringify(events)).not.toContain(tokenFromEmail(first, INVITED));
    });

    it('records a re-invitation of a live invitation as a reminder, with the role it had', async () => {
      const owner = await createUser();
      const { email, row } = await invited(owner, 'client');
      const { events } = await invite(owner, [email], 'employee');
      expect(events.map(shape)).toEqual([
        expect.objectContaining({
          action: 'organization.member.invited',
          targetId: row.id,
          metadata: { email, role: 'employee', reminder: true, previousRole: 'client' },
        }),
      ]);
    });

    it('records an address added at once by auto-accept with the account it added', async () => {
      // Prepare
      const owner = await createUser();
      await db()
        .update(organizations)
        .set({ autoAcceptInvitations: true })
        .where(eq(organizations.id, owner.organizationId));
      const existing = await createUser();
      await updateUserRow(existing.id, { isEmailVerified: true, emailVerifiedAt: new Date() });
      // Act
      const { result, events } = await invite(owner, [existing.email]);
      // Assess
      expectData(result, 201);
      const row = await invitationOf(owner.organizationId, existing.email);
      expect(events.map(shape)).toEqual([
        expect.objectContaining({
          action: 'organization.member.invited',
          targetId: row.id,
          metadata: { email: existing.email, role: 'member', autoAccepted: true, userId: existing.id },
        }),
      ]);
    });

    it('records nothing for addresses that are already members', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const { result, events } = await invite(owner, [member.email]);
      expectData(result, 201);
      expect(events).toEqual([]);
    });

    it('records nothing when refused: a role above the inviter (401), beyond the seats (403)', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const tooHigh = await invite(member, [uniqueEmail()], 'admin', owner.organizationId);
      expectError(tooHigh.result, 401, 'INVITE_ROLE_NOT_ALLOWED');
      expect(tooHigh.events).toEqual([]);
      const tooMany = await invite(
        owner,
        [1, 2, 3, 4, 5].map(() => uniqueEmail('many')),
      );
      expectError(tooMany.result, 403, 'SEAT_LIMIT_REACHED');
      expect(tooMany.events).toEqual([]);
    });
  });

  describe('deleteInvitation', () => {
    const remove = (owner: TestUser, invitationId: string) =>
      send(routes.deleteInvitation, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId, invitationId },
      });

    it('records organization.invitation.deleted, its target the invitation', async () => {
      const owner = await createUser();
      const { email, row } = await invited(owner, 'employee');
      const { result, events } = await remove(owner, row.id);
      expectData(result);
      expect(events.map(shape)).toEqual([
        {
          action: 'organization.invitation.deleted',
          organizationId: owner.organizationId,
          ...byUser(owner),
          caseId: null,
          targetType: 'invitation',
          targetId: row.id,
          metadata: { email, role: 'employee' },
        },
      ]);
    });

    it('records nothing when refused: unknown (404), no longer pending (400)', async () => {
      const owner = await createUser();
      const unknown = await remove(owner, UNKNOWN_ID);
      expectError(unknown.result, 404, 'NOT_FOUND');
      expect(unknown.events).toEqual([]);
      const { email, row, token } = await invited(owner);
      expect(
        (
          await send(routes.rejectInvitation, {
            path: { orgId: owner.organizationId },
            body: { token, email },
          })
        ).result.status,
      ).toBe(200);
      const rejected = await remove(owner, row.id);
      expectError(rejected.result, 400, 'INVITATION_NOT_PENDING');
      expect(rejected.events).toEqual([]);
    });
  });

  describe('resendInvitation', () => {
    const resend = (owner: TestUser, invitationId: string) =>
      send(routes.resendInvitation, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId, invitationId },
      });

    it('records organization.invitation.resent with the status it had', async () => {
      // Prepare
      const owner = await createUser();
      const pending = await invited(owner);
      const rejected = await invited(owner);
      await send(routes.rejectInvitation, {
        path: { orgId: owner.organizationId },
        body: { token: rejected.token, email: rejected.email },
      });
      // Act
      const first = await resend(owner, pending.row.id);
      const second = await resend(owner, rejected.row.id);
      // Assess
      expectData(first.result, 201);
      expectData(second.result, 201);
      expect([...first.events, ...second.events].map(shape)).toEqual([
        {
          action: 'organization.invitation.resent',
          organizationId: owner.organizationId,
          ...byUser(owner),
          caseId: null,
          targetType: 'invitation',
          targetId: pending.row.id,
          metadata: { email: pending.email, role: 'member', previousStatus: 'pending' },
        },
        expect.objectContaining({
          targetId: rejected.row.id,
          metadata: { email: rejected.email, role: 'member', previousStatus: 'rejected' },
        }),
      ]);
      expect(JSON.stringify(first.events)).not.toContain(tokenFromEmail(pending.email, INVITED));
    });

    it('records nothing when refused: an accepted invitation (400), unknown (404)', async () => {
      const owner = await createUser();
      const { email, row, token } = await invited(owner);
      expectData(
        await invoke(routes.acceptInvitation, {
          path: { orgId: owner.organizationId },
          body: { token, email, name: 'Ann Accepted', password: 'a-long-password' },
        }),
        201,
      );
      const accepted = await resend(owner, row.id);
      expectError(accepted.result, 400, 'INVITATION_NOT_PENDING');
      expect(accepted.events).toEqual([]);
      const unknown = await resend(owner, UNKNOWN_ID);
      expectError(unknown.result, 404, 'NOT_FOUND');
      expect(unknown.events).toEqual([]);
    });
  });

  describe('acceptInvitation (no bearer token: the emailed token proves who acts)', () => {
    const accept = (orgId: string, body: Record<string, unknown>) =>
      send(routes.acceptInvitation, { path: { orgId }, body });

    it('records organization.member.joined by the new account, through the session it signs them into', async () => {
      // Prepare
      const owner = await createUser();
      const { email, row, token } = await invited(owner, 'employee');
      // Act
      const { result, events } = await accept(owner.organizationId, {
        token,
        email,
        name: 'Nora Newcomer',
        password: 'a-long-password',
      });
      // Assess
      const data = expectData(result, 201);
      const userId = data.login.userProfile.id as string;
      expect(events.map(shape)).toEqual([
        {
          action: 'organization.member.joined',
          organizationId: owner.organizationId,
          actorType: 'user',
          actorUserId: userId,
          tokenId: sessionOf(data.login.accessToken),
          caseId: null,
          targetType: 'user',
          targetId: userId,
          metadata: { invitationId: row.id, email, role: 'employee', account: 'created' },
        },
      ]);
      expect(JSON.stringify(events)).not.toContain(token);
      expect(JSON.stringify(events)).not.toContain('a-long-password');
    });

    it('records the verified account that joins, with no session (it is not signed in)', async () => {
      const owner = await createUser();
      const existing = await createUser();
      await updateUserRow(existing.id, { isEmailVerified: true, emailVerifiedAt: new Date() });
      expectData((await invite(owner, [existing.email])).result, 201);
      const row = await invitationOf(owner.organizationId, existing.email);
      const { result, events } = await accept(owner.organizationId, {
        token: tokenFromEmail(existing.email, INVITED),
        email: existing.email,
      });
      expect(expectData(result, 201).login).toBeNull();
      expect(events.map(shape)).toEqual([
        expect.objectContaining({
          action: 'organization.member.joined',
          actorType: 'user',
          actorUserId: existing.id,
          tokenId: null,
          targetId: existing.id,
          metadata: { invitationId: row.id, email: existing.email, role: 'member', account: 'existing' },
        }),
      ]);
    });

    it('records nothing when refused: an unknown token (404), name and password missing (400)', async () => {
      const owner = await createUser();
      const { email, token } = await invited(owner);
      const wrong = await accept(owner.organizationId, {
        token: `${token}x`,
        email,
        name: 'Nora',
        password: 'a-long-password',
      });
      expectError(wrong.result, 404, 'NOT_FOUND');
      expect(wrong.events).toEqual([]);
      const noDetails = await accept(owner.organizationId, { token, email });
      expectError(noDetails.result, 400, 'INVITEE_DETAILS_REQUIRED');
      expect(noDetails.events).toEqual([]);
    });
  });

  describe('rejectInvitation (no bearer token)', () => {
    const reject = (orgId: string, body: Record<string, unknown>) =>
      send(routes.rejectInvitation, { path: { orgId }, body });

    it('records organization.invitation.rejected anonymously when no verified account has the address', async () => {
      const owner = await createUser();
      const { email, row, token } = await invited(owner);
      const { result, events } = await reject(owner.organizationId, { token, email, reason: 'Joined another firm' });
      expect(result.status).toBe(200);
      expect(events.map(shape)).toEqual([
        {
          action: 'organization.invitation.rejected',
          organizationId: owner.organizationId,
          actorType: 'anonymous',
          actorUserId: null,
          tokenId: null,
          caseId: null,
          targetType: 'invitation',
          targetId: row.id,
          metadata: { email, role: 'member', reason: 'Joined another firm' },
        },
      ]);
      expect(JSON.stringify(events)).not.toContain(token);
    });

    it('records the verified account of the address as the actor (the token proves its mailbox)', async () => {
      const owner = await createUser();
      const existing = await createUser();
      await updateUserRow(existing.id, { isEmailVerified: true, emailVerifiedAt: new Date() });
      expectData((await invite(owner, [existing.email])).result, 201);
      const { result, events } = await reject(owner.organizationId, {
        token: tokenFromEmail(existing.email, INVITED),
        email: existing.email,
      });
      expect(result.status).toBe(200);
      expect(events.map(shape)).toEqual([
        expect.objectContaining({
          action: 'organization.invitation.rejected',
          actorType: 'user',
          actorUserId: existing.id,
          tokenId: null,
          metadata: { email: existing.email, role: 'member', reason: null },
        }),
      ]);
    });

    it('records nothing when refused: an unknown token (404), already rejected (400)', async () => {
      const owner = await createUser();
      const { email, token } = await invited(owner);
      const wrong = await reject(owner.organizationId, { token: `${token}x`, email });
      expectError(wrong.result, 404, 'NOT_FOUND');
      expect(wrong.events).toEqual([]);
      expect((await reject(owner.organizationId, { token, email })).events).toHaveLength(1);
      const again = await reject(owner.organizationId, { token, email });
      expectError(again.result, 400, 'INVITATION_NOT_PENDING');
      expect(again.events).toEqual([]);
    });
  });

  describe('updateUserRoles', () => {
    const setRoles = (caller: TestUser, orgId: string, body: Record<string, unknown>) =>
      send(routes.updateUserRoles, { token: caller.accessToken, path: { orgId }, body });

    it('records organization.member.role_changed for each member whose role changed, from and to', async () => {
      // Prepare
      const owner = await createUser();
      const changed = await addMember(owner.organizationId, 'member');
      const same = await addMember(owner.organizationId, 'employee');
      // Act
      const { result, events } = await setRoles(owner, owner.organizationId, {
        userIds: [changed.id, same.id, UNKNOWN_ID],
        role: 'employee',
      });
      // Assess
      expectData(result);
      expect(events.map(shape)).toEqual([
        {
          action: 'organization.member.role_changed',
          organizationId: owner.organizationId,
          ...byUser(owner),
          caseId: null,
          targetType: 'user',
          targetId: changed.id,
          metadata: { from: 'member', to: 'employee' },
        },
      ]);
    });

    it('records nothing when no role changes', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const { result, events } = await setRoles(owner, owner.organizationId, { userIds: [member.id], role: 'member' });
      expectData(result);
      expect(events).toEqual([]);
    });

    it("records nothing when refused: an admin changing an owner's role (403)", async () => {
      const owner = await createUser();
      const admin = await addMember(owner.organizationId, 'admin');
      const member = await addMember(owner.organizationId, 'member');
      const { result, events } = await setRoles(admin, owner.organizationId, {
        userIds: [member.id, owner.id],
        role: 'admin',
      });
      expectError(result, 403, 'INSUFFICIENT_ROLE');
      expect(events).toEqual([]);
    });
  });

  describe('updateOrganizationUsers', () => {
    const updateUsers = (caller: TestUser, orgId: string, body: Record<string, unknown>) =>
      send(routes.updateOrganizationUsers, { token: caller.accessToken, path: { orgId }, body });

    it('records organization.member.updated once per member changed, each field from and to', async () => {
      // Prepare
      const owner = await createUser();
      const multi = await addMember(owner.organizationId, 'member');
      const sole = await soleMember(owner.organizationId, 'client');
      const unchanged = await addMember(owner.organizationId, 'employee');
      const newEmail = uniqueEmail('moved');
      // Act
      const { result, events } = await updateUsers(owner, owner.organizationId, {
        users: [
          { userId: multi.id, role: 'employee' },
          { userId: sole.id, name: 'Sam Sole', email: newEmail },
          { userId: unchanged.id, role: 'employee' },
        ],
      });
      // Assess
      expectData(result);
      const common = {
        action: 'organization.member.updated',
        organizationId: owner.organizationId,
        ...byUser(owner),
        caseId: null,
        targetType: 'user',
      };
      expect(events.map(shape)).toEqual([
        {
          ...common,
          targetId: multi.id,
          metadata: { fields: ['role'], changes: { role: { from: 'member', to: 'employee' } } },
        },
        {
          ...common,
          targetId: sole.id,
          metadata: {
            fields: ['name', 'email'],
            changes: { name: { from: sole.name, to: 'Sam Sole' }, email: { from: sole.email, to: newEmail } },
          },
        },
      ]);
    });

    it('records nothing when every value sent is the current one', async () => {
      const owner = await createUser();
      const sole = await soleMember(owner.organizationId, 'client');
      const { result, events } = await updateUsers(owner, owner.organizationId, {
        users: [{ userId: sole.id, role: 'client', name: sole.name, email: sole.email }],
      });
      expectData(result);
      expect(events).toEqual([]);
    });

    it('records nothing when refused: an unknown member (404), another organization’s member renamed (403)', async () => {
      const owner = await createUser();
      const multi = await addMember(owner.organizationId, 'member');
      const sole = await soleMember(owner.organizationId, 'client');
      const unknown = await updateUsers(owner, owner.organizationId, {
        users: [
          { userId: sole.id, role: 'employee' },
          { userId: UNKNOWN_ID, role: 'employee' },
        ],
      });
      expectError(unknown.result, 404, 'NOT_FOUND');
      expect(unknown.events).toEqual([]);
      const shared = await updateUsers(owner, owner.organizationId, {
        users: [
          { userId: sole.id, role: 'employee' },
          { userId: multi.id, name: 'Not Yours' },
        ],
      });
      expectError(shared.result, 403, 'MEMBER_OF_OTHER_ORGANIZATIONS');
      expect(shared.events).toEqual([]);
    });
  });

  describe('removeOrganizationUser', () => {
    const removeUser = (caller: TestUser, orgId: string, userId: string) =>
      send(routes.removeOrganizationUser, { token: caller.accessToken, path: { orgId, userId } });

    it('records organization.member.removed, naming the case access taken away and handed over', async () => {
      // Prepare
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'employee');
      const soleOwned = await createCaseRow(owner.organizationId);
      const shared = await createCaseRow(owner.organizationId);
      await db()
        .insert(caseAccess)
        .values([
          { caseId: soleOwned.id, userId: member.id, access: 'owner' },
          { caseId: shared.id, userId: member.id, access: 'viewer' },
          { caseId: shared.id, userId: owner.id, access: 'owner' },
        ]);
      // Act
      const { result, events } = await removeUser(owner, owner.organizationId, member.id);
      // Assess
      expectData(result);
      expect(events.map(shape)).toEqual([
        {
          action: 'organization.member.removed',
          organizationId: owner.organizationId,
          ...byUser(owner),
          caseId: null,
          targetType: 'user',
          targetId: member.id,
          metadata: {
            email: member.email,
            role: 'employee',
            left: false,
            caseAccessRemoved: expect.arrayContaining([
              { caseId: soleOwned.id, access: 'owner' },
              { caseId: shared.id, access: 'viewer' },
            ]),
            casesHandedOver: [{ caseId: soleOwned.id, heirId: owner.id }],
          },
        },
      ]);
      expect(events[0]!.metadata.caseAccessRemoved).toHaveLength(2);
    });

    it('records a member leaving as acting themselves', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const { result, events } = await removeUser(member, owner.organizationId, member.id);
      expectData(result);
      expect(events.map(shape)).toEqual([
        expect.objectContaining({
          action: 'organization.member.removed',
          ...byUser(member),
          targetId: member.id,
          metadata: { email: member.email, role: 'member', left: true, caseAccessRemoved: [], casesHandedOver: [] },
        }),
      ]);
    });

    it('records nothing when refused: the last owner leaving (400), a non-member (404), a member removing another (403)', async () => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const lastOwner = await removeUser(owner, owner.organizationId, owner.id);
      expectError(lastOwner.result, 400, 'LAST_OWNER');
      expect(lastOwner.events).toEqual([]);
      const stranger = await removeUser(owner, owner.organizationId, UNKNOWN_ID);
      expectError(stranger.result, 404, 'NOT_FOUND');
      expect(stranger.events).toEqual([]);
      const byMember = await removeUser(member, owner.organizationId, owner.id);
      expectError(byMember.result, 403, 'INSUFFICIENT_ROLE');
      expect(byMember.events).toEqual([]);
    });
  });

  describe('validateOrganizationName', () => {
    it('records nothing', async () => {
      const owner = await createUser();
      const { result, events } = await send(routes.validateOrganizationName, {
        organization: owner.organizationId,
        body: { name: uniqueName('Free Name') },
      });
      expect(expectData(result)).toEqual({ isValid: true });
      expect(events).toEqual([]);
    });
  });
});
