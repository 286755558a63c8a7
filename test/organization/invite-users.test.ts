import { and, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { handler as inviteUsers } from '../../functions/organization/invite-users';
import { routes } from '../../functions/routes';
import { addMonths, now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { invitations, organizationMembers, organizations } from '../../lib/db/schema';
import { hashToken } from '../../lib/secrets';
import { addMember, createUser, emailsTo, signIn, tokenFromEmail, uniqueEmail, verifyEmailOf } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';
import { seatsUsed } from '../harness/organizations';

const ONE_MONTH_AND_A_DAY = 32 * 86_400;
const INVITED = 'You are invited to join';

const invite = (caller: { accessToken: string }, orgId: string, body: unknown) =>
  invoke(routes.inviteUsers, { token: caller.accessToken, path: { orgId }, body });

const invitationRows = (orgId: string) => db().select().from(invitations).where(eq(invitations.organizationId, orgId));

const organizationName = async (orgId: string) =>
  (await db().select({ name: organizations.name }).from(organizations).where(eq(organizations.id, orgId)))[0]!.name;

const acceptAsNewUser = (orgId: string, email: string, token: string) =>
  invoke(routes.acceptInvitation, {
    path: { orgId },
    body: { token, email, name: 'New Invitee', password: 'a-long-password' },
  });

describe('POST /organization/{orgId}/invite', () => {
  it('creates pending member invitations with one-month tokens and emails a link to each address', async () => {
    // Prepare
    testClock.freeze();
    const issuedAt = now();
    const owner = await createUser({ organizationName: `Invite Happy ${Date.now()}` });
    const first = uniqueEmail('first');
    const second = uniqueEmail('second');
    // Act
    const result = await invite(owner, owner.organizationId, { emails: [first, second.toUpperCase(), first] });
    // Assess
    expect(expectData(result, 201)).toEqual({ message: '2 invitation(s) sent' });
    const rows = await invitationRows(owner.organizationId);
    expect(rows.map((r) => r.email).sort()).toEqual([first, second].sort());
    for (const row of rows) {
      expect(row).toMatchObject({
        role: 'member',
        status: 'pending',
        invitedById: owner.id,
        invitedUserId: null,
        acceptedById: null,
      });
      expect(row.expiresAt.toISOString()).toBe(addMonths(issuedAt, 1).toISOString());
    }
    const name = await organizationName(owner.organizationId);
    for (const address of [first, second]) {
      const mail = emailsTo(address);
      expect(mail).toHaveLength(1);
      expect(mail[0]!.subject).toBe(`${INVITED} ${name}`);
      expect(mail[0]!.text).toContain('token=');
      const token = tokenFromEmail(address, INVITED);
      expect(rows.find((r) => r.email === address)!.tokenHash).toBe(hashToken(token));
    }
    expect(await seatsUsed(owner)).toBe(3);
  });

  it('records the role asked for and links an invitee who already has an account', async () => {
    const owner = await createUser();
    const existing = await createUser();
    expectData(await invite(owner, owner.organizationId, { emails: [existing.email], role: 'admin' }), 201);
    const [row] = await invitationRows(owner.organizationId);
    expect(row).toMatchObject({ email: existing.email, role: 'admin', status: 'pending', invitedUserId: existing.id });
    // Without auto-accept an existing user is invited, not added.
    const member = await db()
      .select()
      .from(organizationMembers)
      .where(
        and(eq(organizationMembers.organizationId, owner.organizationId), eq(organizationMembers.userId, existing.id)),
      );
    expect(member).toHaveLength(0);
  });

  it('skips addresses that are already members', async () => {
    const owner = await createUser();
    const colleague = await addMember(owner.organizationId, 'employee');
    const newcomer = uniqueEmail('newcomer');
    const result = await invite(owner, owner.organizationId, {
      emails: [colleague.email, owner.email.toUpperCase(), newcomer],
    });
    expect(expectData(result, 201).message).toBe('1 invitation(s) sent, 2 already member(s) skipped');
    expect((await invitationRows(owner.organizationId)).map((r) => r.email)).toEqual([newcomer]);
    expect(emailsTo(colleague.email).filter((m) => m.subject.startsWith(INVITED))).toHaveLength(0);
  });

  it('sends a pending invitation again as a reminder, keeping its token, expiry and higher role, without taking another seat', async () => {
    // Prepare
    const owner = await createUser();
    const invitee = uniqueEmail('again');
    expectData(await invite(owner, owner.organizationId, { emails: [invitee] }), 201);
    const oldToken = tokenFromEmail(invitee, INVITED);
    const [before] = await invitationRows(owner.organizationId);
    testClock.advance(60);
    // Act
    expect(
      expectData(await invite(owner, owner.organizationId, { emails: [invitee], role: 'client' }), 201).message,
    ).toBe('1 invitation(s) sent');
    // Assess
    const rows = await invitationRows(owner.organizationId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: before!.id,
      status: 'pending',
      role: 'member',
      tokenHash: before!.tokenHash,
      expiresAt: before!.expiresAt,
    });
    expect(rows[0]!.updatedAt.getTime()).toBeGreaterThan(before!.updatedAt.getTime());
    const mail = emailsTo(invitee);
    expect(mail).toHaveLength(2);
    expect(mail[1]!.subject).toBe(`Reminder: your invitation to join ${await organizationName(owner.organizationId)}`);
    expect(mail[1]!.text).not.toContain('token=');
    expect(await seatsUsed(owner)).toBe(2);
    expect(expectData(await acceptAsNewUser(owner.organizationId, invitee, oldToken), 201).permission).toEqual({
      role: 'member',
    });
  });

  it('re-invites an expired invitation with a new token and the role asked for', async () => {
    const owner = await createUser();
    const invitee = uniqueEmail('expired');
    expectData(await invite(owner, owner.organizationId, { emails: [invitee], role: 'admin' }), 201);
    const oldToken = tokenFromEmail(invitee, INVITED);
    testClock.advance(ONE_MONTH_AND_A_DAY);
    const fresh = await signIn(owner);
    expectData(await invite(fresh, owner.organizationId, { emails: [invitee], role: 'client' }), 201);
    const newToken = tokenFromEmail(invitee, INVITED);
    expect(newToken).not.toBe(oldToken);
    expect((await invitationRows(owner.organizationId))[0]).toMatchObject({
      role: 'client',
      status: 'pending',
      tokenHash: hashToken(newToken),
    });
    expectError(await acceptAsNewUser(owner.organizationId, invitee, oldToken), 404, 'NOT_FOUND');
    expect(expectData(await acceptAsNewUser(owner.organizationId, invitee, newToken), 201).permission).toEqual({
      role: 'client',
    });
  });

  it('re-sends a pending invitation even when every seat is taken', async () => {
    const owner = await createUser();
    const addresses = Array.from({ length: 4 }, () => uniqueEmail('full'));
    expectData(await invite(owner, owner.organizationId, { emails: addresses }), 201);
    expect(await seatsUsed(owner)).toBe(5);
    expect(expectData(await invite(owner, owner.organizationId, { emails: [addresses[0]] }), 201).message).toBe(
      '1 invitation(s) sent',
    );
    expect(emailsTo(addresses[0]!)).toHaveLength(2);
    expect(await seatsUsed(owner)).toBe(5);
  });

  it.each([['client'], ['member']])('lets a plain member invite a %s', async (role) => {
    const owner = await createUser();
    const member = await addMember(owner.organizationId, 'member');
    const invitee = uniqueEmail(role);
    expectData(await invite(member, owner.organizationId, { emails: [invitee], role }), 201);
    expect(await invitationRows(owner.organizationId)).toEqual([
      expect.objectContaining({ email: invitee, role, invitedById: member.id }),
    ]);
  });

  it.each([['owner'], ['admin'], ['full_access'], ['employee'], ['billing'], ['user']])(
    'answers 401 INVITE_ROLE_NOT_ALLOWED when a plain member invites a %s, writing nothing',
    async (role) => {
      const owner = await createUser();
      const member = await addMember(owner.organizationId, 'member');
      const invitee = uniqueEmail('denied');
      expectError(
        await invite(member, owner.organizationId, { emails: [invitee], role }),
        401,
        'INVITE_ROLE_NOT_ALLOWED',
      );
      expect(await invitationRows(owner.organizationId)).toHaveLength(0);
      expect(emailsTo(invitee)).toHaveLength(0);
    },
  );

  it('lets an inviter hand out roles up to their own rank only', async () => {
    const owner = await createUser();
    const admin = await addMember(owner.organizationId, 'admin');
    expectData(await invite(admin, owner.organizationId, { emails: [uniqueEmail('peer')], role: 'admin' }), 201);
    expectError(
      await invite(admin, owner.organizationId, { emails: [uniqueEmail('boss')], role: 'owner' }),
      401,
      'INVITE_ROLE_NOT_ALLOWED',
    );
    expect((await invitationRows(owner.organizationId)).map((r) => r.role)).toEqual(['admin']);
  });

  it("answers 403 SEAT_LIMIT_REACHED past the free plan's 5 seats and writes nothing of the request", async () => {
    // Prepare: owner + 1 member + 2 pending = 4 of 5 seats.
    const owner = await createUser();
    await addMember(owner.organizationId, 'member');
    expectData(await invite(owner, owner.organizationId, { emails: [uniqueEmail('a'), uniqueEmail('b')] }), 201);
    const extra = [uniqueEmail('c'), uniqueEmail('d')];
    // Act
    const result = await invite(owner, owner.organizationId, { emails: extra });
    // Assess
    expectError(result, 403, 'SEAT_LIMIT_REACHED');
    expect(await invitationRows(owner.organizationId)).toHaveLength(2);
    for (const address of extra) expect(emailsTo(address)).toHaveLength(0);
    expect(await seatsUsed(owner)).toBe(4);
    // The last seat is still there for one address.
    expectData(await invite(owner, owner.organizationId, { emails: [extra[0]] }), 201);
    expectError(await invite(owner, owner.organizationId, { emails: [extra[1]] }), 403, 'SEAT_LIMIT_REACHED');
    expect(await seatsUsed(owner)).toBe(5);
  });

  it('never overbooks when many invites race for the last two seats', async () => {
    // Prepare: owner + 2 pending = 3 of 5 seats.
    const owner = await createUser();
    expectData(await invite(owner, owner.organizationId, { emails: [uniqueEmail('held'), uniqueEmail('held')] }), 201);
    const racers = Array.from({ length: 8 }, () => uniqueEmail('racer'));
    // Act
    const results = await Promise.all(racers.map((email) => invite(owner, owner.organizationId, { emails: [email] })));
    // Assess
    const accepted = results.filter((r) => r.status === 201);
    expect(accepted).toHaveLength(2);
    for (const refused of results.filter((r) => r.status !== 201)) expectError(refused, 403, 'SEAT_LIMIT_REACHED');
    const rows = await invitationRows(owner.organizationId);
    expect(rows).toHaveLength(4);
    expect(await seatsUsed(owner)).toBe(5);
    const invitedRacers = racers.filter((email) => rows.some((r) => r.email === email));
    expect(invitedRacers).toHaveLength(2);
    for (const email of racers) expect(emailsTo(email)).toHaveLength(invitedRacers.includes(email) ? 1 : 0);
  });

  it('frees the seats of expired invitations', async () => {
    // Prepare: every seat taken by pending invitations.
    let owner = await createUser();
    const expiring = Array.from({ length: 4 }, () => uniqueEmail('expiring'));
    expectData(await invite(owner, owner.organizationId, { emails: expiring }), 201);
    expectError(
      await invite(owner, owner.organizationId, { emails: [uniqueEmail('late')] }),
      403,
      'SEAT_LIMIT_REACHED',
    );
    // Act
    testClock.advance(ONE_MONTH_AND_A_DAY);
    owner = await signIn(owner);
    // Assess
    expect(await seatsUsed(owner)).toBe(1);
    const newcomers = Array.from({ length: 3 }, () => uniqueEmail('newcomer'));
    expectData(await invite(owner, owner.organizationId, { emails: [...newcomers, expiring[0]] }), 201);
    const renewed = (await invitationRows(owner.organizationId)).find((r) => r.email === expiring[0])!;
    expect(renewed.status).toBe('pending');
    expect(renewed.expiresAt.getTime()).toBeGreaterThan(now().getTime());
    expect(await seatsUsed(owner)).toBe(5);
  });

  it('adds an existing user with a verified email at once when the organization auto-accepts, and still invites a new address', async () => {
    // Prepare
    const owner = await createUser();
    await db()
      .update(organizations)
      .set({ autoAcceptInvitations: true })
      .where(eq(organizations.id, owner.organizationId));
    const existing = await createUser();
    await verifyEmailOf(existing);
    const newcomer = uniqueEmail('newcomer');
    // Act
    const result = await invite(owner, owner.organizationId, { emails: [existing.email, newcomer], role: 'employee' });
    // Assess
    expect(expectData(result, 201).message).toBe('1 invitation(s) sent, 1 existing user(s) added');
    const rows = await invitationRows(owner.organizationId);
    expect(rows.find((r) => r.email === existing.email)).toMatchObject({
      status: 'accepted',
      acceptedById: existing.id,
      role: 'employee',
    });
    expect(rows.find((r) => r.email === newcomer)).toMatchObject({ status: 'pending', acceptedById: null });
    const name = await organizationName(owner.organizationId);
    expect(emailsTo(existing.email).map((m) => m.subject)).toContain(`You were added to ${name}`);
    expect(emailsTo(existing.email).filter((m) => m.subject.startsWith(INVITED))).toHaveLength(0);
    expect(emailsTo(newcomer).map((m) => m.subject)).toEqual([`${INVITED} ${name}`]);
    const mine = expectData(await invoke(routes.listMyOrganizations, { token: existing.accessToken }));
    expect(mine.data).toContainEqual(
      expect.objectContaining({
        organization: expect.objectContaining({ id: owner.organizationId }),
        permission: { role: 'employee' },
      }),
    );
    expect(await seatsUsed(owner)).toBe(3);
  });

  it.each([
    [{}, ['body.emails']],
    [{ emails: 'someone@example.com' }, ['body.emails']],
    [{ emails: [] }, ['body.emails']],
    [{ emails: ['not-an-email'] }, ['body.emails.0']],
    [{ emails: [42] }, ['body.emails.0']],
    [{ emails: [`${'x'.repeat(250)}@example.com`] }, ['body.emails.0']],
    [{ emails: Array.from({ length: 51 }, (_v, i) => `bulk${i}@example.com`) }, ['body.emails']],
    [{ emails: ['ok@example.com'], role: 'boss' }, ['body.role']],
    [{ emails: ['ok@example.com'], role: 7 }, ['body.role']],
  ])('answers 400 VALIDATION_FAILED naming the field for %j', async (body, fields) => {
    const owner = await createUser();
    expectError(await invite(owner, owner.organizationId, body), 400, 'VALIDATION_FAILED', fields);
    expect(await invitationRows(owner.organizationId)).toHaveLength(0);
  });

  it('answers 403 NOT_A_MEMBER for an orgId that is not a uuid, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(await invite(owner, 'not-a-uuid', { emails: [uniqueEmail()] }), 403, 'NOT_A_MEMBER');
  });

  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    const owner = await createUser();
    const result = await invoke(routes.inviteUsers, {
      token: owner.accessToken,
      path: { orgId: owner.organizationId },
      rawBody: '{"emails":',
    });
    expectError(result, 400, 'MALFORMED_JSON');
  });
});

describeSecurity(inviteUsers, {
  request: ({ organizationId }) => ({ path: { orgId: organizationId }, body: { emails: [uniqueEmail()] } }),
  unchanged: async ({ organizationId }, request) => {
    const [email] = request.body!.emails;
    expect((await invitationRows(organizationId)).filter((row) => row.email === email)).toHaveLength(0);
  },
});

describe('POST /organization/{orgId}/invite security', () => {
  it('answers 403 NOT_A_MEMBER for an unknown organization', async () => {
    const stranger = await createUser();
    expectError(
      await invite(stranger, '0190a4e2-0000-7000-8000-000000000000', { emails: [uniqueEmail()] }),
      403,
      'NOT_A_MEMBER',
    );
  });

  it.each([['billing'], ['employee'], ['full_access'], ['admin']] as const)(
    'lets a %s invite (member role or above)',
    async (role) => {
      const owner = await createUser();
      const inviter = await addMember(owner.organizationId, role);
      expectData(await invite(inviter, owner.organizationId, { emails: [uniqueEmail()] }), 201);
      expect(await invitationRows(owner.organizationId)).toHaveLength(1);
    },
  );

  it('invites for an automation token with members:write', async () => {
    const owner = await createUser();
    const writer = expectData(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: ['members:write'] } }),
    );
    expectData(await invite({ accessToken: writer.token }, owner.organizationId, { emails: [uniqueEmail()] }), 201);
    expect(await invitationRows(owner.organizationId)).toHaveLength(1);
  });
});
