import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { createUser, emailsTo, tokenFromEmail, uniqueEmail, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

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
    expect(expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: user.email } })).isSuccess).toBe(
      false,
    );
  });

  it('sends at most 3 reset emails per address per hour, answering 200 every time', async () => {
    // Prepare
    testClock.freeze(new Date('2026-11-22T10:00:00.000Z'));
    const user = await createUser();
    const resetMails = () => emailsTo(user.email).filter((m) => m.subject === 'Reset your password');
    // Act: 15 requests (from different client IPs, and in changing case), a minute apart
    for (let i = 0; i < 15; i += 1) {
      const email = i % 2 === 0 ? user.email : user.email.toUpperCase();
      const result = await invoke(routes.sendForgotPasswordLink, { body: { email }, ip: `192.0.2.${i + 1}` });
      expect(expectData(result)).toEqual({ isSuccess: true, message: expect.any(String) });
      testClock.advance(60);
    }
    // Assess: exactly 3 emails
    expect(resetMails()).toHaveLength(3);
    // Another address is not affected
    const other = await createUser();
    expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: other.email } }));
    expect(emailsTo(other.email).filter((m) => m.subject === 'Reset your password')).toHaveLength(1);
    // An hour after the first one, a new link can be sent, and it works
    testClock.advance(3600);
    expectData(await invoke(routes.sendForgotPasswordLink, { body: { email: user.email } }));
    expect(resetMails()).toHaveLength(4);
    const token = tokenFromEmail(user.email, 'Reset');
    expect(
      expectData(
        await invoke(routes.resetPassword, { body: { token, email: user.email, password: 'brand-new-secret' } }),
      ).isSuccess,
    ).toBe(true);
  });

  it('answers 400 naming body.email for a bad address', async () => {
    expectError(await invoke(routes.sendForgotPasswordLink, { body: { email: 'nope' } }), 400, 'VALIDATION_FAILED', [
      'body.email',
    ]);
  });
});

describeSecurity(routes.sendForgotPasswordLink, { request: ({ user }) => ({ body: { email: user.email } }) });
