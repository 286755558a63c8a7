import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { invitations, organizationPlans, users } from '../../lib/db/schema';
import { hashToken } from '../../lib/secrets';
import { createUser, emailsTo, tokenFromEmail, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

const registration = (overrides: Record<string, unknown> = {}) => ({
  name: 'Rita Register',
  email: uniqueEmail('rita'),
  password: 'a-long-password',
  acceptTerms: true,
  ...overrides,
});

describe('POST /auth/register', () => {
  it('creates the user, an owned organization on the free plan, invitations, a verification email and a session', async () => {
    // Prepare
    const invitee = uniqueEmail('invitee');
    const body = registration({ organizationName: 'Register & Sons', inviteEmails: [invitee, invitee.toUpperCase()] });
    // Act
    const data = expectData(await invoke(routes.register, { body }));
    // Assess
    expect(data.accessToken).toMatch(/^ey/);
    expect(data.refreshToken).toMatch(/^cebs_rt_/);
    expect(data.userProfile).toMatchObject({ email: body.email, name: 'Rita Register', isEmailVerified: false });
    expect(data.organizationInfo).toMatchObject({
      organization: { name: 'Register & Sons', slug: 'register-sons', email: body.email, isActive: true },
      permission: { role: 'owner' },
      billing: { billingMode: 'free', onCaseBilling: false },
      invitations: { sent: 1, notSent: 0 },
    });
    expect(data.userProfile.organizations.map((o: any) => o.organization.id)).toEqual([
      data.organizationInfo.organization.id,
    ]);

    const [plan] = await db()
      .select()
      .from(organizationPlans)
      .where(eq(organizationPlans.organizationId, data.organizationInfo.organization.id));
    expect(plan).toMatchObject({ type: 'free', seats: 5, devices: 2, storageBytes: 5 * 1024 ** 3, isActive: true });

    const [user] = await db().select().from(users).where(eq(users.email, body.email));
    expect(user!.termsAcceptedAt).toBeInstanceOf(Date);
    expect(user!.termsVersion).toBeTruthy();
    expect(user!.passwordHash).toMatch(/^scrypt\$/);
    expect(user!.passwordHash).not.toContain(body.password);

    const invites = await db()
      .select()
      .from(invitations)
      .where(eq(invitations.organizationId, data.organizationInfo.organization.id));
    expect(invites).toHaveLength(1);
    expect(invites[0]).toMatchObject({ email: invitee, role: 'member', status: 'pending', invitedById: user!.id });
    const invitationToken = tokenFromEmail(invitee, 'invited');
    expect(invites[0]!.tokenHash).toBe(hashToken(invitationToken));

    const verification = tokenFromEmail(body.email, 'Verify');
    expect(verification).toMatch(/^cebs_ev_/);
    const verified = await invoke(routes.verifyEmail, { body: { token: verification } });
    expectData(verified);

    const profile = expectData(await invoke(routes.getProfile, { token: data.accessToken }));
    expect(profile.id).toBe(user!.id);
  });

  it('names the organization after the user when no name is given, and never fails on that name', async () => {
    const first = expectData(await invoke(routes.register, { body: registration({ name: 'Dana Doe' }) }));
    const second = expectData(await invoke(routes.register, { body: registration({ name: 'Dana Doe' }) }));
    expect(first.organizationInfo.organization.name).toBe("Dana Doe's Organization");
    expect(second.organizationInfo.organization.name).toBe("Dana Doe's Organization (2)");
    expect(second.organizationInfo.organization.slug).not.toBe(first.organizationInfo.organization.slug);
  });

  it('answers 400 TERMS_NOT_ACCEPTED and creates nothing when the terms are not accepted', async () => {
    const body = registration({ acceptTerms: false });
    expectError(await invoke(routes.register, { body }), 400, 'TERMS_NOT_ACCEPTED');
    expect(await db().select().from(users).where(eq(users.email, body.email))).toHaveLength(0);
  });

  it('answers 400 ORGANIZATION_NAME_TAKEN (case-insensitively) and rolls the user back', async () => {
    await createUser({ organizationName: 'Taken Partners' });
    const body = registration({ organizationName: 'TAKEN partners' });
    expectError(await invoke(routes.register, { body }), 400, 'ORGANIZATION_NAME_TAKEN');
    expect(await db().select().from(users).where(eq(users.email, body.email))).toHaveLength(0);
    expect(emailsTo(body.email)).toHaveLength(0);
  });

  it('answers 400 USER_NOT_CREATED for an email that already has an account', async () => {
    const existing = await createUser();
    expectError(
      await invoke(routes.register, { body: registration({ email: existing.email.toUpperCase() }) }),
      400,
      'USER_NOT_CREATED',
    );
  });

  it("signs up with 50 inviteEmails: sends the first four (the free plan's free seats), not the rest, and says so", async () => {
    // Prepare
    const invitees = Array.from({ length: 50 }, () => uniqueEmail('seat'));
    const body = registration({ inviteEmails: invitees });
    // Act
    const data = expectData(await invoke(routes.register, { body }));
    // Assess
    expect(data.organizationInfo.invitations).toEqual({ sent: 4, notSent: 46 });
    const organizationId = data.organizationInfo.organization.id;
    const invites = await db().select().from(invitations).where(eq(invitations.organizationId, organizationId));
    expect(invites.map((i) => i.email).sort()).toEqual(invitees.slice(0, 4).sort());
    for (const invitee of invitees.slice(0, 4)) expect(emailsTo(invitee)).toHaveLength(1);
    for (const invitee of invitees.slice(4)) expect(emailsTo(invitee)).toHaveLength(0);
    const usage = expectData(
      await invoke(routes.getOrganizationUsage, { token: data.accessToken, path: { orgId: organizationId } }),
    );
    expect(usage).toMatchObject({ seats: 5, seatsUsed: 5, remainingSeats: 0 });
  });

  it("counts neither the user's own address nor repeats among inviteEmails", async () => {
    const invitee = uniqueEmail('once');
    const email = uniqueEmail('self');
    const body = registration({ email, inviteEmails: [email.toUpperCase(), invitee, invitee.toUpperCase(), invitee] });
    const data = expectData(await invoke(routes.register, { body }));
    expect(data.organizationInfo.invitations).toEqual({ sent: 1, notSent: 0 });
    expect(emailsTo(email).filter((m) => m.subject.includes('invited'))).toHaveLength(0);
  });

  it('says no invitation was sent when inviteEmails is absent', async () => {
    const data = expectData(await invoke(routes.register, { body: registration() }));
    expect(data.organizationInfo.invitations).toEqual({ sent: 0, notSent: 0 });
  });

  it('lets exactly one of many racing sign-ups with the same email through', async () => {
    const body = registration();
    const results = await Promise.all(Array.from({ length: 5 }, () => invoke(routes.register, { body })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const refused of results.filter((r) => r.status !== 200)) expectError(refused, 400, 'USER_NOT_CREATED');
    const [count] = await db().select({ n: sql<number>`count(*)::int` }).from(users).where(eq(users.email, body.email));
    expect(count!.n).toBe(1);
  });

  it.each([
    [{ email: undefined }, 'body.email'],
    [{ password: 'short' }, 'body.password'],
    [{ name: '   ' }, 'body.name'],
    [{ name: 'n'.repeat(101) }, 'body.name'],
    [{ acceptTerms: 'yes' }, 'body.acceptTerms'],
    [{ acceptTerms: undefined }, 'body.acceptTerms'],
    [{ inviteEmails: ['not-an-email'] }, 'body.inviteEmails.0'],
    [{ inviteEmails: 'a@example.com' }, 'body.inviteEmails'],
    [{ inviteEmails: Array.from({ length: 51 }, (_v, i) => `bulk${i}@example.com`) }, 'body.inviteEmails'],
    [{ organizationName: '' }, 'body.organizationName'],
    [{ name: 'Nul\u0000Name' }, 'body.name'],
    [{ organizationName: 'Nul\u0000 LLP' }, 'body.organizationName'],
    [{ organizationName: 'Zero\u200bWidth LLP' }, 'body.organizationName'],
    [{ organizationName: 'Bidi \u202eLLP' }, 'body.organizationName'],
  ])('answers 400 VALIDATION_FAILED for %j', async (change, field) => {
    expectError(await invoke(routes.register, { body: registration(change) }), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.register, { request: () => ({ body: registration() }) });
