import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { createUser, emailsTo, tokenFromEmail, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

describe('POST /auth/reset-password', () => {
  async function requestReset() {
    const user = await createUser();
    expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: user.email } }));
    return { user, token: tokenFromEmail(user.email, 'Reset') };
  }

  it('sets the new password, ends sign-in sessions, and sends the password-changed email', async () => {
    const { user, token } = await requestReset();
    const data = expectData(
      await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'brand-new-secret' } }),
    );
    expect(data).toEqual({ isSuccess: true, message: expect.any(String) });
    expectError(await invoke(routes.getProfile, { token: user.accessToken }), 401, 'UNAUTHENTICATED');
    expectError(
      await invoke(routes.login, { body: { email: user.email, password: user.password } }),
      401,
      'INVALID_CREDENTIALS',
    );
    expectData(await invoke(routes.login, { body: { email: user.email, password: 'brand-new-secret' } }));
    expect(emailsTo(user.email).map((m) => m.subject)).toContain('Your password was changed');
  });

  it('ends every legacy token and revokes every automation token of the account', async () => {
    // Prepare: a stolen session minted long-lived tokens
    const user = await createUser();
    const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }))
      .token as string;
    const automation = expectData(
      await invoke(routes.generateToken, { token: user.accessToken, body: { scopes: ['profile:read'] } }),
    );
    const other = await createUser();
    const othersLegacy = expectData(await invoke(routes.generateToken, { token: other.accessToken, body: {} }))
      .token as string;
    expectData(await invoke(routes.getProfile, { token: legacy }));
    expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: user.email } }));
    // Act
    const token = tokenFromEmail(user.email, 'Reset');
    expectData(
      await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'brand-new-secret' } }),
    );
    // Assess: nothing of the account works any more
    expectError(await invoke(routes.getProfile, { token: legacy }), 401, 'UNAUTHENTICATED');
    expectError(await invoke(routes.getProfile, { token: automation.token }), 401, 'UNAUTHENTICATED');
    expectError(await invoke(routes.getProfile, { token: user.accessToken }), 401, 'UNAUTHENTICATED');
    // ...the automation token stays listed, as revoked
    const fresh = expectData(await invoke(routes.login, { body: { email: user.email, password: 'brand-new-secret' } }));
    expect(expectData(await invoke(routes.listTokens, { token: fresh.accessToken }))).toEqual([
      expect.objectContaining({ id: automation.id, revoked: true }),
    ]);
    expect(expectData(await invoke(routes.listSessions, { token: fresh.accessToken }))).toEqual([
      expect.objectContaining({ current: true }),
    ]);
    // ...and another account is untouched
    expectData(await invoke(routes.getProfile, { token: othersLegacy }));
    expectData(await invoke(routes.getProfile, { token: other.accessToken }));
  });

  it('answers isSuccess false for a token used once already', async () => {
    const { user, token } = await requestReset();
    expectData(
      await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'brand-new-secret' } }),
    );
    const again = expectData(
      await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'another-secret' } }),
    );
    expect(again.isSuccess).toBe(false);
  });

  it('answers isSuccess false for an expired token and keeps the old password', async () => {
    const { user, token } = await requestReset();
    testClock.advance(3601);
    const data = expectData(
      await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'brand-new-secret' } }),
    );
    expect(data).toEqual({ isSuccess: false, message: expect.stringMatching(/expired/) });
    expectData(await invoke(routes.login, { body: { email: user.email, password: user.password } }));
  });

  it.each([
    ['an unknown token', (t: string) => ({ token: `${t}x` })],
    ['another email than the token was sent to', () => ({ email: uniqueEmail('other') })],
  ])('answers isSuccess false for %s', async (_label, change) => {
    const { user, token } = await requestReset();
    const data = expectData(
      await invoke(routes.resetPassword, {
        body: { token, email: user.email, password: 'brand-new-secret', ...change(token) },
      }),
    );
    expect(data.isSuccess).toBe(false);
  });

  it.each([
    [{ password: 'short' }, 'body.password'],
    [{ token: '' }, 'body.token'],
    [{ email: 'x' }, 'body.email'],
  ])('answers 400 VALIDATION_FAILED for %j', async (change, field) => {
    const body = { token: 'cebs_pr_x', email: 'a@example.com', password: 'long-enough', ...change };
    expectError(await invoke(routes.resetPassword, { body }), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.resetPassword, {
  request: async ({ user }) => {
    expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: user.email } }));
    return { body: { token: tokenFromEmail(user.email, 'Reset'), email: user.email, password: 'brand-new-secret' } };
  },
});
