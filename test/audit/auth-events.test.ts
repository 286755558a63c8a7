import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import type { AuditAction, AuditActorType } from '../../lib/audit';
import { db } from '../../lib/db/client';
import { sessions, users } from '../../lib/db/schema';
import { hashToken } from '../../lib/secrets';
import { createUser, type TestUser, tokenFromEmail, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { mintAutomationToken, mintLegacyToken } from '../harness/tokens';
import { type AuditRow, invokeAudited } from '../harness/audit';

/**
 * The audit events of members' sign-in, sessions, tokens and account: each successful request
 * writes exactly one event in every organization the user belongs to, naming who acted (the user
 * proven by a password, refresh token or emailed token when the route takes no bearer token), and
 * never a secret; a failed one writes none.
 */

/** Invokes `route` with a request id of its own and answers what that request wrote to the audit trail. */
const send = invokeAudited;

/** A user who owns two organizations: the one of sign-up and one created afterwards. */
async function memberOfTwo(): Promise<{ user: TestUser; organizationIds: string[] }> {
  const user = await createUser();
  const second = expectData(
    await invoke(routes.createOrganization, {
      token: user.accessToken,
      body: { name: `Second ${randomBytes(4).toString('hex')}` },
    }),
    201,
  );
  const secondId: string = second.organization.id;
  expect(secondId).not.toBe(user.organizationId);
  return { user, organizationIds: [user.organizationId, secondId] };
}

/** The sign-in session behind an access token (its `sid` claim). */
const sessionOf = (accessToken: string) => decodeJwt(accessToken).sid as string;

/** The session id of an automation, legacy or refresh token. */
async function sessionIdOfToken(token: string): Promise<string> {
  const [row] = await db()
    .select({ id: sessions.id })
    .from(sessions)
    .where(eq(sessions.tokenHash, hashToken(token)));
  return row!.id;
}

interface Expected {
  action: AuditAction;
  organizationIds: string[];
  actor: { type: AuditActorType; userId: string | null; tokenId: string | null };
  target: { type: string; id: string };
}

/** Exactly one event per organization, each with the action, actor and target expected. */
function expectOneEventPerOrganization(events: AuditRow[], expected: Expected): void {
  expect(events.map((event) => event.organizationId).sort()).toEqual([...expected.organizationIds].sort());
  for (const event of events) {
    expect(event).toMatchObject({
      action: expected.action,
      actorType: expected.actor.type,
      actorUserId: expected.actor.userId,
      tokenId: expected.actor.tokenId,
      targetType: expected.target.type,
      targetId: expected.target.id,
    });
  }
}

/** No token value, password, or hash of either in any event's metadata. */
async function expectNoSecrets(events: AuditRow[], userId: string, secrets: string[]): Promise<void> {
  const [user] = await db().select({ passwordHash: users.passwordHash }).from(users).where(eq(users.id, userId));
  const tokenHashes = await db().select({ hash: sessions.tokenHash }).from(sessions).where(eq(sessions.userId, userId));
  const forbidden = [
    ...secrets,
    ...secrets.map(hashToken),
    user!.passwordHash,
    ...tokenHashes.map((row) => row.hash),
  ].filter((value) => value.length > 0);
  for (const event of events) {
    const metadata = JSON.stringify(event.metadata);
    expect(metadata).not.toMatch(/cebs_|scrypt\$|eyJ/);
    for (const secret of forbidden) expect(metadata).not.toContain(secret);
  }
}

describe('audit events of sign-in, sessions and tokens', () => {
  it('login: auth.signed_in in each organization, naming the user and the new session', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const { result, events } = await send(routes.login, {
      body: { email: user.email, password: user.password },
      ip: '198.51.100.7',
    });
    const data = expectData(result);
    const sessionId = sessionOf(data.accessToken);
    expectOneEventPerOrganization(events, {
      action: 'auth.signed_in',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionId },
      target: { type: 'session', id: sessionId },
    });
    expect(events.map((event) => event.ip)).toEqual(['198.51.100.7', '198.51.100.7']);
    await expectNoSecrets(events, user.id, [user.password, data.accessToken, data.refreshToken]);
  });

  it('login with a wrong password, or an unknown address, writes nothing', async () => {
    const { user } = await memberOfTwo();
    const wrong = await send(routes.login, { body: { email: user.email, password: 'not-the-password' } });
    expectError(wrong.result, 401, 'INVALID_CREDENTIALS');
    expect(wrong.events).toEqual([]);
    const unknown = await send(routes.login, { body: { email: uniqueEmail('ghost'), password: 'whatever-1' } });
    expect(unknown.result.status).toBe(401);
    expect(unknown.events).toEqual([]);
  });

  it('refreshToken: auth.session.refreshed in each organization, naming the user and the session', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const { result, events } = await send(routes.refreshToken, { body: { refreshToken: user.refreshToken } });
    const data = expectData(result);
    const sessionId = sessionOf(user.accessToken);
    expectOneEventPerOrganization(events, {
      action: 'auth.session.refreshed',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionId },
      target: { type: 'session', id: sessionId },
    });
    await expectNoSecrets(events, user.id, [user.refreshToken, data.accessToken]);
  });

  it('refreshToken with an unknown or ended refresh token writes nothing', async () => {
    const { user } = await memberOfTwo();
    const unknown = await send(routes.refreshToken, {
      body: { refreshToken: `cebs_rt_${randomBytes(24).toString('hex')}` },
    });
    expect(unknown.result.status).toBe(404);
    expect(unknown.events).toEqual([]);
    expectData(await invoke(routes.logout, { token: user.accessToken }));
    const ended = await send(routes.refreshToken, { body: { refreshToken: user.refreshToken } });
    expect(ended.result.status).toBe(404);
    expect(ended.events).toEqual([]);
  });

  it('logout: auth.signed_out in each organization, by the session it ends', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const sessionId = sessionOf(user.accessToken);
    const { result, events } = await send(routes.logout, { token: user.accessToken });
    expectData(result);
    expectOneEventPerOrganization(events, {
      action: 'auth.signed_out',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionId },
      target: { type: 'session', id: sessionId },
    });
    await expectNoSecrets(events, user.id, [user.accessToken, user.refreshToken]);
  });

  it('logout with a legacy token: the event names the legacy token as actor and target', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const legacy = await mintLegacyToken(user);
    const legacyId = await sessionIdOfToken(legacy);
    const { result, events } = await send(routes.logout, { token: legacy });
    expectData(result);
    expectOneEventPerOrganization(events, {
      action: 'auth.signed_out',
      organizationIds,
      actor: { type: 'legacy_token', userId: user.id, tokenId: legacyId },
      target: { type: 'session', id: legacyId },
    });
    await expectNoSecrets(events, user.id, [legacy]);
  });

  it('endSession: auth.session.ended in each organization; an unknown id writes nothing', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const second = expectData(await invoke(routes.login, { body: { email: user.email, password: user.password } }));
    const secondId = sessionOf(second.accessToken);
    const { result, events } = await send(routes.endSession, { token: user.accessToken, path: { id: secondId } });
    expect(result.status, JSON.stringify(result.body)).toBe(204);
    expectOneEventPerOrganization(events, {
      action: 'auth.session.ended',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionOf(user.accessToken) },
      target: { type: 'session', id: secondId },
    });
    expect(events[0]!.metadata).toEqual({ kind: 'login', current: false });
    await expectNoSecrets(events, user.id, [second.accessToken, second.refreshToken]);

    const again = await send(routes.endSession, { token: user.accessToken, path: { id: secondId } });
    expect(again.result.status).toBe(404);
    expect(again.events).toEqual([]);
  });

  it('generateToken: auth.token.created in each organization with its scopes and name, never the token', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const { result, events } = await send(routes.generateToken, {
      token: user.accessToken,
      body: { scopes: ['profile:read', 'profile:write'], label: 'CI export' },
    });
    const data = expectData(result);
    expectOneEventPerOrganization(events, {
      action: 'auth.token.created',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionOf(user.accessToken) },
      target: { type: 'token', id: data.id },
    });
    expect(events[0]!.metadata).toMatchObject({
      kind: 'automation',
      label: 'CI export',
      scopes: ['profile:read', 'profile:write'],
    });
    await expectNoSecrets(events, user.id, [data.token]);
  });

  it('generateToken of a legacy token records it without its value; refused options write nothing', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const { result, events } = await send(routes.generateToken, { token: user.accessToken, body: {} });
    const data = expectData(result);
    expectOneEventPerOrganization(events, {
      action: 'auth.token.created',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionOf(user.accessToken) },
      target: { type: 'token', id: await sessionIdOfToken(data.token) },
    });
    expect(events[0]!.metadata).toMatchObject({ kind: 'legacy' });
    await expectNoSecrets(events, user.id, [data.token]);

    const refused = await send(routes.generateToken, { token: user.accessToken, body: { label: 'no scopes' } });
    expect(refused.result.status).toBe(400);
    expect(refused.events).toEqual([]);
  });

  it('revokeToken: auth.token.revoked in each organization; revoking again or an unknown id writes nothing', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const minted = await mintAutomationToken(user, ['profile:read']);
    const { result, events } = await send(routes.revokeToken, { token: user.accessToken, path: { id: minted.id } });
    expect(result.status, JSON.stringify(result.body)).toBe(204);
    expectOneEventPerOrganization(events, {
      action: 'auth.token.revoked',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionOf(user.accessToken) },
      target: { type: 'token', id: minted.id },
    });
    await expectNoSecrets(events, user.id, [minted.token]);

    const again = await send(routes.revokeToken, { token: user.accessToken, path: { id: minted.id } });
    expect(again.result.status).toBe(204);
    expect(again.events).toEqual([]);
    const unknown = await send(routes.revokeToken, {
      token: user.accessToken,
      path: { id: '00000000-0000-4000-8000-000000000000' },
    });
    expect(unknown.result.status).toBe(404);
    expect(unknown.events).toEqual([]);
  });

  it('updateTokenScopes: auth.token.scopes_changed with the old and new scopes; a revoked token writes nothing', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const minted = await mintAutomationToken(user, ['profile:read']);
    const { result, events } = await send(routes.updateTokenScopes, {
      token: user.accessToken,
      path: { id: minted.id },
      body: { scopes: ['profile:read', 'profile:write'] },
    });
    expectData(result);
    expectOneEventPerOrganization(events, {
      action: 'auth.token.scopes_changed',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionOf(user.accessToken) },
      target: { type: 'token', id: minted.id },
    });
    expect(events[0]!.metadata).toMatchObject({
      previousScopes: ['profile:read'],
      scopes: ['profile:read', 'profile:write'],
    });
    await expectNoSecrets(events, user.id, [minted.token]);

    await invoke(routes.revokeToken, { token: user.accessToken, path: { id: minted.id } });
    const revoked = await send(routes.updateTokenScopes, {
      token: user.accessToken,
      path: { id: minted.id },
      body: { scopes: ['profile:read'] },
    });
    expectError(revoked.result, 400, 'TOKEN_REVOKED');
    expect(revoked.events).toEqual([]);
  });
});

describe('audit events of the account', () => {
  it('register: user.registered once, in the new organization, naming the user and their first session', async () => {
    const password = `pw-${randomBytes(6).toString('hex')}`;
    const { result, events } = await send(routes.register, {
      body: {
        name: 'Ada Audit',
        email: uniqueEmail('registered'),
        password,
        acceptTerms: true,
        organizationName: `Firm ${randomBytes(5).toString('hex')}`,
      },
    });
    const data = expectData(result);
    const userId: string = data.userProfile.id;
    const registered = events.filter((event) => event.action === 'user.registered');
    expectOneEventPerOrganization(registered, {
      action: 'user.registered',
      organizationIds: [data.organizationInfo.organization.id],
      actor: { type: 'user', userId, tokenId: sessionOf(data.accessToken) },
      target: { type: 'user', id: userId },
    });
    await expectNoSecrets(events, userId, [password, data.accessToken, data.refreshToken]);
  });

  it('register with an address already taken writes nothing', async () => {
    const { user } = await memberOfTwo();
    const { result, events } = await send(routes.register, {
      body: { name: 'Again', email: user.email, password: 'another-pw-1', acceptTerms: true },
    });
    expect(result.status).toBe(400);
    expect(events).toEqual([]);
  });

  it('updateProfile: user.profile.updated in each organization, naming the fields only', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const { result, events } = await send(routes.updateProfile, {
      token: user.accessToken,
      body: { name: 'Renamed Person', phoneNumbers: ['+1 555 0100'] },
    });
    expectData(result);
    expectOneEventPerOrganization(events, {
      action: 'user.profile.updated',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionOf(user.accessToken) },
      target: { type: 'user', id: user.id },
    });
    expect(events[0]!.metadata).toEqual({ fields: ['name', 'phoneNumbers'] });

    const nothing = await send(routes.updateProfile, { token: user.accessToken, body: {} });
    expectData(nothing.result);
    expect(nothing.events).toEqual([]);
  });

  it('updateProfile with an automation token: the actor is the automation token', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const minted = await mintAutomationToken(user, ['profile:write']);
    const { result, events } = await send(routes.updateProfile, { token: minted.token, body: { onboardingStep: 3 } });
    expectData(result);
    expectOneEventPerOrganization(events, {
      action: 'user.profile.updated',
      organizationIds,
      actor: { type: 'automation_token', userId: user.id, tokenId: minted.id },
      target: { type: 'user', id: user.id },
    });
    await expectNoSecrets(events, user.id, [minted.token]);
  });

  it('changePassword: user.password.changed in each organization; a wrong old password writes nothing', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const newPassword = `new-${randomBytes(6).toString('hex')}`;
    const wrong = await send(routes.changePassword, {
      token: user.accessToken,
      body: { oldPassword: 'not-the-password', newPassword },
    });
    expectError(wrong.result, 400, 'WRONG_PASSWORD');
    expect(wrong.events).toEqual([]);

    const { result, events } = await send(routes.changePassword, {
      token: user.accessToken,
      body: { oldPassword: user.password, newPassword },
    });
    expectData(result);
    expectOneEventPerOrganization(events, {
      action: 'user.password.changed',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionOf(user.accessToken) },
      target: { type: 'user', id: user.id },
    });
    await expectNoSecrets(events, user.id, [user.password, newPassword]);
  });

  it('sendForgotPasswordLink: user.password_reset.requested for a member, by an anonymous caller; nothing for an unknown address', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const { result, events } = await send(routes.sendForgotPasswordLink, { body: { email: user.email } });
    expect(expectData(result).isSuccess).toBe(true);
    expectOneEventPerOrganization(events, {
      action: 'user.password_reset.requested',
      organizationIds,
      actor: { type: 'anonymous', userId: null, tokenId: null },
      target: { type: 'user', id: user.id },
    });
    await expectNoSecrets(events, user.id, [tokenFromEmail(user.email, 'Reset')]);

    const unknown = await send(routes.sendForgotPasswordLink, { body: { email: uniqueEmail('ghost') } });
    expect(expectData(unknown.result).isSuccess).toBe(false);
    expect(unknown.events).toEqual([]);
  });

  it('resetPassword: user.password.reset in each organization, naming the user proven by the link; a bad link writes nothing', async () => {
    const { user, organizationIds } = await memberOfTwo();
    expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: user.email } }));
    const token = tokenFromEmail(user.email, 'Reset');
    const password = `reset-${randomBytes(6).toString('hex')}`;
    const bad = await send(routes.resetPassword, {
      body: { token: `${token}x`, email: user.email, password },
    });
    expect(expectData(bad.result).isSuccess).toBe(false);
    expect(bad.events).toEqual([]);

    const { result, events } = await send(routes.resetPassword, { body: { token, email: user.email, password } });
    expect(expectData(result).isSuccess).toBe(true);
    expectOneEventPerOrganization(events, {
      action: 'user.password.reset',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: null },
      target: { type: 'user', id: user.id },
    });
    await expectNoSecrets(events, user.id, [token, password, user.password]);
  });

  it('resendVerificationEmail and verifyEmail: one event each per organization; a used token or a verified account writes nothing', async () => {
    const { user, organizationIds } = await memberOfTwo();
    const sent = await send(routes.resendVerificationEmail, { token: user.accessToken });
    expectData(sent.result);
    expectOneEventPerOrganization(sent.events, {
      action: 'user.verification_email.sent',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: sessionOf(user.accessToken) },
      target: { type: 'user', id: user.id },
    });
    const token = tokenFromEmail(user.email, 'Verify');
    await expectNoSecrets(sent.events, user.id, [token]);

    const { result, events } = await send(routes.verifyEmail, { body: { token, email: user.email } });
    expectData(result);
    expectOneEventPerOrganization(events, {
      action: 'user.email.verified',
      organizationIds,
      actor: { type: 'user', userId: user.id, tokenId: null },
      target: { type: 'user', id: user.id },
    });
    await expectNoSecrets(events, user.id, [token]);

    const used = await send(routes.verifyEmail, { body: { token, email: user.email } });
    expect(used.result.status).toBe(404);
    expect(used.events).toEqual([]);
    const verified = await send(routes.resendVerificationEmail, { token: user.accessToken });
    expectError(verified.result, 400, 'EMAIL_ALREADY_VERIFIED');
    expect(verified.events).toEqual([]);
  });

  it('checkEmailAvailability writes nothing', async () => {
    const { user } = await memberOfTwo();
    const { result, events } = await send(routes.checkEmailAvailability, { body: { email: user.email } });
    expectData(result);
    expect(events).toEqual([]);
  });
});
