import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';

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

  it.each([
    ['no token', undefined],
    ['a malformed token', 'not-a-token'],
    ['a forged JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4Iiwic2lkIjoieSJ9.c2lnbmF0dXJl'],
  ])('answers 401 with %s', async (_label, token) => {
    expectError(await invoke(routes.logout, { token }), 401, 'UNAUTHENTICATED');
  });

  it('answers 401 on a second logout with the same token', async () => {
    const user = await createUser();
    expectData(await invoke(routes.logout, { token: user.accessToken }));
    expectError(await invoke(routes.logout, { token: user.accessToken }), 401, 'UNAUTHENTICATED');
  });
});
