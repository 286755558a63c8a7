import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

describe('POST /auth/logout', () => {
  it('deletes only the session of the bearer token and answers an empty object', async () => {
    // Prepare: two sign-in sessions of one user
    const user = await createUser();
    const second = expectData(await invoke(routes.login, { body: { email: user.email, password: user.password } }));
    // Act
    const result = await invoke(routes.logout, { token: user.accessToken });
    // Assess
    expect(expectData(result)).toEqual({});
    expectError(await invoke(routes.getProfile, { token: user.accessToken }), 401, 'UNAUTHENTICATED');
    expectData(await invoke(routes.getProfile, { token: second.accessToken }));
  });

  it('ends a legacy token used as the bearer', async () => {
    const user = await createUser();
    const legacy = expectData(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
    expectData(await invoke(routes.logout, { token: legacy.token }));
    expectError(await invoke(routes.getProfile, { token: legacy.token }), 401, 'UNAUTHENTICATED');
    expectData(await invoke(routes.getProfile, { token: user.accessToken }));
  });

  it('ignores a body', async () => {
    const user = await createUser();
    expect(expectData(await invoke(routes.logout, { token: user.accessToken, body: { anything: true } }))).toEqual({});
  });
});

describeSecurity(routes.logout, { request: () => ({}), everyToken: true });
