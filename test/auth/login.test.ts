import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createUser, updateUserRow, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';

describe('POST /auth/login', () => {
  it('signs in and returns tokens with the profile and its organizations', async () => {
    // Prepare
    const user = await createUser({ organizationName: 'Login Happy LLP' });
    // Act
    const result = await invoke(routes.login, { body: { email: user.email.toUpperCase(), password: user.password } });
    // Assess
    const data = expectData(result);
    expect(data.accessToken).toMatch(/^ey/);
    expect(data.refreshToken).toMatch(/^cebs_rt_/);
    expect(data.userProfile).toMatchObject({ id: user.id, email: user.email, isEmailVerified: false });
    expect(data.userProfile.organizations).toEqual([
      expect.objectContaining({
        organization: expect.objectContaining({ id: user.organizationId, name: 'Login Happy LLP', activePlan: null }),
        permission: { role: 'owner' },
        billing: expect.objectContaining({ billingMode: 'free', delinquent: false }),
      }),
    ]);
    const profile = await invoke(routes.getProfile, { token: data.accessToken });
    expect(expectData(profile).id).toBe(user.id);
    // Signing in is activity, not a profile change: updatedAt stays.
    const before = await invoke(routes.login, { body: { email: user.email, password: user.password } });
    expect(expectData(before).userProfile.updatedAt).toBe(data.userProfile.updatedAt);
  });

  it.each([
    ['a wrong password', (u: { email: string }) => ({ email: u.email, password: 'not-the-password' })],
    ['an unknown email', () => ({ email: uniqueEmail('nobody'), password: 'whatever-it-is' })],
  ])('answers 401 for %s', async (_label, credentials) => {
    const user = await createUser();
    expectError(await invoke(routes.login, { body: credentials(user) }), 401, 'INVALID_CREDENTIALS');
  });

  it.each([
    ['an inactive account', { isActive: false }],
    ['an extraction-only user', { accountKind: 'extraction_only' }],
  ])('answers 401 for %s', async (_label, change) => {
    const user = await createUser();
    await updateUserRow(user.id, change);
    expectError(await invoke(routes.login, { body: { email: user.email, password: user.password } }), 401, 'ACCOUNT_INACTIVE');
  });

  it.each([
    [{}, ['body.email', 'body.password']],
    [{ email: 'not-an-email', password: 'x' }, ['body.email']],
    [{ email: 'a@example.com', password: 12345678 }, ['body.password']],
    [{ email: 'a@example.com', password: 'x'.repeat(129) }, ['body.password']],
    [{ email: 'a@example.com', password: 'secret-pw', extra: true }, ['body']],
  ])('answers 400 naming the bad field for %j', async (body, fields) => {
    expectError(await invoke(routes.login, { body }), 400, 'VALIDATION_FAILED', fields);
  });

  it('answers 400 for a body that is not JSON', async () => {
    expectError(await invoke(routes.login, { rawBody: '{"email":' }), 400, 'MALFORMED_JSON');
  });
});
