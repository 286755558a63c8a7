import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { invitations, organizationMembers, organizationPlans, users } from '../../lib/db/schema';
import { createUser, uniqueEmail, verifyEmailOf } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { invited } from '../harness/invitations';
import { UNKNOWN_ID } from '../harness/ids';

const ONE_MONTH_AND_A_DAY = 32 * 86_400;

const accept = (orgId: string, body: Record<string, unknown>) =>
  invoke(routes.acceptInvitation, { path: { orgId }, body });

const newcomer = (token: string, email: string) => ({
  token,
  email,
  name: 'Nora Newcomer',
  password: 'a-long-password',
});

const invitationById = async (id: string) => (await db().select().from(invitations).where(eq(invitations.id, id)))[0]!;

const membership = (orgId: string, userId: string) =>
  db()
    .select()
    .from(organizationMembers)
    .where(and(eq(organizationMembers.organizationId, orgId), eq(organizationMembers.userId, userId)));

const userByEmail = async (email: string) => (await db().select().from(users).where(eq(users.email, email)))[0];

describe('POST /organization/{orgId}/invitation/accept', () => {
  it('creates the new invitee a verified account, a membership with the invited role, and signs them in', async () => {
    // Prepare
    const owner = await createUser({ organizationName: `Accept Firm ${Date.now()}` });
    const { email, row, token } = await invited(owner, { role: 'employee' });
    // Act
    const result = await accept(owner.organizationId, newcomer(token, email));
    // Assess
    const data = expectData(result, 201);
    expect(data.organization).toMatchObject({ id: owner.organizationId, name: expect.stringMatching(/^Accept Firm /) });
    expect(data.permission).toEqual({ role: 'employee' });
    expect(data.billing).toMatchObject({ billingMode: 'free' });
    expect(data.login.accessToken).toMatch(/^ey/);
    expect(data.login.refreshToken).toMatch(/^cebs_rt_/);
    expect(data.login.userProfile).toMatchObject({ email, name: 'Nora Newcomer', isEmailVerified: true });
    expect(data.login.userProfile.organizations).toEqual([
      expect.objectContaining({
        organization: expect.objectContaining({ id: owner.organizationId }),
        permission: { role: 'employee' },
      }),
    ]);

    const user = await userByEmail(email);
    expect(user).toMatchObject({ id: data.login.userProfile.id, isEmailVerified: true });
    expect(await membership(owner.organizationId, user!.id)).toEqual([expect.objectContaining({ role: 'employee' })]);
    expect(await invitationById(row.id)).toMatchObject({
      status: 'accepted',
      acceptedById: user!.id,
      invitedUserId: user!.id,
    });

    const profile = expectData(await invoke(routes.getProfile, { token: data.login.accessToken }));
    expect(profile.id).toBe(user!.id);
    const refreshed = expectData(
      await invoke(routes.refreshToken, { body: { refreshToken: data.login.refreshToken } }),
    );
    expect(refreshed.accessToken).toMatch(/^ey/);
    const login = expectData(await invoke(routes.login, { body: { email, password: 'a-long-password' } }));
    expect(login.userProfile.id).toBe(user!.id);
  });

  it('adds an existing user with a verified email with the invited role and answers login null', async () => {
    const owner = await createUser();
    const existing = await createUser();
    await verifyEmailOf(existing);
    const { row, token } = await invited(owner, { email: existing.email, role: 'client' });
    const data = expectData(await accept(owner.organizationId, { token, email: existing.email.toUpperCase() }), 201);
    expect(data.login).toBeNull();
    expect(data.permission).toEqual({ role: 'client' });
    expect(await membership(owner.organizationId, existing.id)).toEqual([expect.objectContaining({ role: 'client' })]);
    expect(await invitationById(row.id)).toMatchObject({ status: 'accepted', acceptedById: existing.id });
    const mine = expectData(await invoke(routes.listMyOrganizations, { token: existing.accessToken }));
    expect(mine.data.map((o: any) => o.organization.id)).toContain(owner.organizationId);
    // The existing account's password is untouched.
    expectData(await invoke(routes.login, { body: { email: existing.email, password: existing.password } }));
  });

  it('keeps the seat count: the pending invitation becomes a member', async () => {
    const owner = await createUser();
    const { email, token } = await invited(owner);
    const usage = async () =>
      expectData(
        await invoke(routes.getOrganizationUsage, { token: owner.accessToken, path: { orgId: owner.organizationId } }),
      ).seatsUsed;
    expect(await usage()).toBe(2);
    expectData(await accept(owner.organizationId, newcomer(token, email)), 201);
    expect(await usage()).toBe(2);
  });

  it.each([
    ['name', { password: 'a-long-password' }],
    ['password', { name: 'Nameless' }],
    ['name and password', {}],
  ])('answers 400 INVITEE_DETAILS_REQUIRED when a new invitee omits %s, creating nothing', async (_label, details) => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    expectError(await accept(owner.organizationId, { token, email, ...details }), 400, 'INVITEE_DETAILS_REQUIRED');
    expect(await userByEmail(email)).toBeUndefined();
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending' });
  });

  it('answers 404 for an unknown organization', async () => {
    const owner = await createUser();
    const { email, token } = await invited(owner);
    expectError(await accept(UNKNOWN_ID, newcomer(token, email)), 404, 'NOT_FOUND');
  });

  it("answers 404 for a token sent to another organization's path", async () => {
    const owner = await createUser();
    const other = await createUser();
    const { email, row, token } = await invited(owner);
    expectError(await accept(other.organizationId, newcomer(token, email)), 404, 'NOT_FOUND');
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending' });
  });

  it('answers 404 for a wrong token', async () => {
    const owner = await createUser();
    const { email, row } = await invited(owner);
    expectError(await accept(owner.organizationId, newcomer('cebs_inv_not-the-token', email)), 404, 'NOT_FOUND');
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending' });
    expect(await userByEmail(email)).toBeUndefined();
  });

  it('answers 404 for a token sent with another email, even one also invited', async () => {
    const owner = await createUser();
    const first = await invited(owner);
    const second = await invited(owner);
    expectError(await accept(owner.organizationId, newcomer(first.token, second.email)), 404, 'NOT_FOUND');
    expectError(await accept(owner.organizationId, newcomer(first.token, uniqueEmail('other'))), 404, 'NOT_FOUND');
    expect(await invitationById(first.row.id)).toMatchObject({ status: 'pending' });
    expect(await invitationById(second.row.id)).toMatchObject({ status: 'pending' });
  });

  it('answers 400 TOKEN_EXPIRED a month after the invitation was sent', async () => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    testClock.advance(ONE_MONTH_AND_A_DAY);
    expectError(await accept(owner.organizationId, newcomer(token, email)), 400, 'TOKEN_EXPIRED');
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending' });
    expect(await userByEmail(email)).toBeUndefined();
  });

  it('answers 400 INVITATION_NOT_PENDING when accepting twice', async () => {
    const owner = await createUser();
    const { email, token } = await invited(owner);
    expectData(await accept(owner.organizationId, newcomer(token, email)), 201);
    expectError(await accept(owner.organizationId, newcomer(token, email)), 400, 'INVITATION_NOT_PENDING');
    expectError(await accept(owner.organizationId, { token, email }), 400, 'INVITATION_NOT_PENDING');
  });

  it('answers 400 INVITATION_NOT_PENDING after the invitation was rejected', async () => {
    const owner = await createUser();
    const { email, token } = await invited(owner);
    expectData(
      await invoke(routes.rejectInvitation, { path: { orgId: owner.organizationId }, body: { token, email } }),
    );
    expectError(await accept(owner.organizationId, newcomer(token, email)), 400, 'INVITATION_NOT_PENDING');
    expect(await userByEmail(email)).toBeUndefined();
  });

  it('answers 403 NO_ACTIVE_PLAN when the organization has no active plan, changing nothing', async () => {
    const owner = await createUser();
    const { email, row, token } = await invited(owner);
    await db()
      .update(organizationPlans)
      .set({ isActive: false })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    expectError(await accept(owner.organizationId, newcomer(token, email)), 403, 'NO_ACTIVE_PLAN');
    expect(await invitationById(row.id)).toMatchObject({ status: 'pending' });
    expect(await userByEmail(email)).toBeUndefined();
  });

  it.each([
    [{}, ['body.token', 'body.email']],
    [{ token: 'x', email: 'not-an-email' }, ['body.email']],
    [{ token: 42, email: 'a@example.com' }, ['body.token']],
    [{ token: '', email: 'a@example.com' }, ['body.token']],
    [{ token: 'x'.repeat(513), email: 'a@example.com' }, ['body.token']],
    [{ token: 'x', email: 'a@example.com', password: 'short' }, ['body.password']],
    [{ token: 'x', email: 'a@example.com', password: 'p'.repeat(129) }, ['body.password']],
    [{ token: 'x', email: 'a@example.com', name: '   ' }, ['body.name']],
    [{ token: 'x', email: 'a@example.com', name: 'n'.repeat(101) }, ['body.name']],
    [{ token: 'x', email: 'a@example.com', name: 'Nul\u0000Name' }, ['body.name']],
  ])('answers 400 VALIDATION_FAILED naming the field for %j', async (body, fields) => {
    const owner = await createUser();
    expectError(await accept(owner.organizationId, body), 400, 'VALIDATION_FAILED', fields);
  });

  it('ignores a role sent with the acceptance: the invitee joins with the invited role', async () => {
    const owner = await createUser();
    const { email, token } = await invited(owner, { role: 'client' });
    const data = expectData(await accept(owner.organizationId, { ...newcomer(token, email), role: 'owner' }), 201);
    expect(data.permission).toEqual({ role: 'client' });
    expect(await membership(owner.organizationId, data.login.userProfile.id)).toEqual([
      expect.objectContaining({ role: 'client' }),
    ]);
  });

  it('answers 404 NOT_FOUND for an orgId that is not a uuid, as for an unknown organization', async () => {
    expectError(await accept('acme', { token: 'x', email: 'a@example.com' }), 404, 'NOT_FOUND');
  });

  it('answers 400 naming path.orgId for an orgId over 200 characters', async () => {
    expectError(await accept('o'.repeat(201), { token: 'x', email: 'a@example.com' }), 400, 'VALIDATION_FAILED', [
      'path.orgId',
    ]);
  });
});

describeSecurity(routes.acceptInvitation, {
  request: async ({ owner, organizationId }) => {
    const { email, token } = await invited(owner);
    return { path: { orgId: organizationId }, body: newcomer(token, email) };
  },
});
