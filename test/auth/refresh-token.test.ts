import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { createUser, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

describe('POST /auth/refresh', () => {
  it('returns a new working access token and the same refresh token, without the profile', async () => {
    const user = await createUser();
    testClock.advance(5);
    const data = expectData(await invoke(routes.refreshToken, { body: { refreshToken: user.refreshToken } }));
    expect(data).toEqual({ accessToken: expect.stringMatching(/^ey/), refreshToken: user.refreshToken });
    expect(data.accessToken).not.toBe(user.accessToken);
    expectData(await invoke(routes.getProfile, { token: data.accessToken }));
  });

  it('keeps a session usable after its access token expired', async () => {
    const user = await createUser();
    testClock.advance(16 * 60);
    expectError(await invoke(routes.getProfile, { token: user.accessToken }), 401, 'UNAUTHENTICATED');
    const data = expectData(await invoke(routes.refreshToken, { body: { refreshToken: user.refreshToken } }));
    expectData(await invoke(routes.getProfile, { token: data.accessToken }));
  });

  it('answers 404 for an unknown refresh token', async () => {
    expectError(await invoke(routes.refreshToken, { body: { refreshToken: 'cebs_rt_unknown' } }), 404, 'NOT_FOUND');
  });

  it('answers 404 once the session was logged out', async () => {
    const user = await createUser();
    expectData(await invoke(routes.logout, { token: user.accessToken }));
    expectError(await invoke(routes.refreshToken, { body: { refreshToken: user.refreshToken } }), 404, 'NOT_FOUND');
  });

  it('answers 400 TOKEN_EXPIRED after 30 days', async () => {
    const user = await createUser();
    testClock.advance(30 * 86_400 + 1);
    expectError(await invoke(routes.refreshToken, { body: { refreshToken: user.refreshToken } }), 400, 'TOKEN_EXPIRED');
  });

  it.each([
    ['deleted', { deletedAt: new Date() }],
    ['deactivated', { isActive: false }],
  ])('answers 400 USER_GONE when the user was %s', async (_label, change) => {
    const user = await createUser();
    await updateUserRow(user.id, change);
    expectError(await invoke(routes.refreshToken, { body: { refreshToken: user.refreshToken } }), 400, 'USER_GONE');
  });

  it.each([
    [{}, 'body.refreshToken'],
    [{ refreshToken: '' }, 'body.refreshToken'],
    [{ refreshToken: 42 }, 'body.refreshToken'],
    [{ refreshToken: 'x'.repeat(513) }, 'body.refreshToken'],
  ])('answers 400 VALIDATION_FAILED for %j', async (body, field) => {
    expectError(await invoke(routes.refreshToken, { body }), 400, 'VALIDATION_FAILED', [field]);
  });
});

describeSecurity(routes.refreshToken, { request: ({ user }) => ({ body: { refreshToken: user.refreshToken } }) });
