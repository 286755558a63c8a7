import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { createUser, emailsTo, tokenFromEmail, uniqueEmail, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';

describe('POST /auth/send-forgot-password-link', () => {
  it('emails a reset link with a token query parameter', async () => {
    const user = await createUser();
    const data = expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: user.email.toUpperCase() } }));
    expect(data).toEqual({ isSuccess: true, message: expect.any(String) });
    const [mail] = emailsTo(user.email).filter((m) => m.subject === 'Reset your password');
    expect(mail!.text).toMatch(/https:\/\/app\.example\.test\/reset-password\?token=cebs_pr_/);
    expect(mail!.html).toContain('reset-password?token=');
  });

  it('answers 200 with isSuccess false for an unknown email, and sends nothing', async () => {
    const email = uniqueEmail('ghost');
    const data = expectData(await invoke(routes.sendForgotPasswordLink, { body: { email } }));
    expect(data).toEqual({ isSuccess: false, message: expect.stringMatching(/no account/i) });
    expect(emailsTo(email)).toHaveLength(0);
  });

  it('answers isSuccess false for an account that cannot sign in', async () => {
    const user = await createUser();
    await updateUserRow(user.id, { isActive: false });
    expect(expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: user.email } })).isSuccess).toBe(false);
  });

  it('answers 400 naming body.email for a bad address', async () => {
    expectError(await invoke(routes.sendForgotPasswordLink, { body: { email: 'nope' } }), 400, 'VALIDATION_FAILED', ['body.email']);
  });
});

describe('POST /auth/reset-password', () => {
  async function requestReset() {
    const user = await createUser();
    expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: user.email } }));
    return { user, token: tokenFromEmail(user.email, 'Reset') };
  }

  it('sets the new password, ends sign-in sessions, and sends the password-changed email', async () => {
    const { user, token } = await requestReset();
    const data = expectData(await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'brand-new-secret' } }));
    expect(data).toEqual({ isSuccess: true, message: expect.any(String) });
    expectError(await invoke(routes.getProfile, { token: user.accessToken }), 401, 'UNAUTHENTICATED');
    expectError(await invoke(routes.login, { body: { email: user.email, password: user.password } }), 401, 'INVALID_CREDENTIALS');
    expectData(await invoke(routes.login, { body: { email: user.email, password: 'brand-new-secret' } }));
    expect(emailsTo(user.email).map((m) => m.subject)).toContain('Your password was changed');
  });

  it('answers isSuccess false for a token used once already', async () => {
    const { user, token } = await requestReset();
    expectData(await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'brand-new-secret' } }));
    const again = expectData(await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'another-secret' } }));
    expect(again.isSuccess).toBe(false);
  });

  it('answers isSuccess false for an expired token and keeps the old password', async () => {
    const { user, token } = await requestReset();
    testClock.advance(3601);
    const data = expectData(await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'brand-new-secret' } }));
    expect(data).toEqual({ isSuccess: false, message: expect.stringMatching(/expired/) });
    expectData(await invoke(routes.login, { body: { email: user.email, password: user.password } }));
  });

  it.each([
    ['an unknown token', (t: string) => ({ token: `${t}x` })],
    ['another email than the token was sent to', () => ({ email: uniqueEmail('other') })],
  ])('answers isSuccess false for %s', async (_label, change) => {
    const { user, token } = await requestReset();
    const data = expectData(
      await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'brand-new-secret', ...change(token) } }),
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
