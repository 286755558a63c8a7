import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { openLoginSession } from '../../lib/auth/sessions';
import { db } from '../../lib/db/client';
import { createUser, signIn } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { mintAutomationToken, mintLegacyToken } from '../harness/tokens';
import { describeSecurity } from '../harness/security';

/** DELETE /auth/sessions/{id} (extension): ends one of the caller's sign-in sessions or legacy tokens. */

const listSessions = (token: string) => invoke(routes.listSessions, { token });
const endSession = (token: string, id: string) => invoke(routes.endSession, { token, path: { id } });

describe('DELETE /auth/sessions/{id}', () => {
  it('ends another sign-in session (access and refresh token) with 204 and no body', async () => {
    const user = await createUser();
    const other = await signIn(user);
    const otherId = expectData(await listSessions(other.accessToken)).find((s: { current: boolean }) => s.current).id;
    const result = await endSession(user.accessToken, otherId);
    expect(result.status).toBe(204);
    expect(result.body).toBeUndefined();
    expectError(await invoke(routes.getProfile, { token: other.accessToken }), 401, 'UNAUTHENTICATED');
    expectError(await invoke(routes.refreshToken, { body: { refreshToken: other.refreshToken } }), 404, 'NOT_FOUND');
    expect(expectData(await listSessions(user.accessToken)).map((s: { id: string }) => s.id)).not.toContain(otherId);
    // Ending it again: it is gone
    expectError(await endSession(user.accessToken, otherId), 404, 'NOT_FOUND');
  });

  it('ends a legacy token', async () => {
    const user = await createUser();
    const legacy = await mintLegacyToken(user);
    const id = expectData(await listSessions(user.accessToken)).find((s: { kind: string }) => s.kind === 'legacy').id;
    expect((await endSession(user.accessToken, id)).status).toBe(204);
    expectError(await invoke(routes.getProfile, { token: legacy }), 401, 'UNAUTHENTICATED');
  });

  it('ends the current session too (like logout)', async () => {
    const user = await createUser();
    const id = expectData(await listSessions(user.accessToken))[0].id;
    expect((await endSession(user.accessToken, id)).status).toBe(204);
    expectError(await listSessions(user.accessToken), 401, 'UNAUTHENTICATED');
  });

  it("answers 404 for another user's session, and leaves it working", async () => {
    const user = await createUser();
    const other = await createUser();
    const otherId = expectData(await listSessions(other.accessToken))[0].id;
    expectError(await endSession(user.accessToken, otherId), 404, 'NOT_FOUND');
    expectData(await invoke(routes.getProfile, { token: other.accessToken }));
  });

  it("answers 404 for the id of the caller's automation token (revoked at DELETE /auth/tokens/{id})", async () => {
    const user = await createUser();
    const minted = await mintAutomationToken(user, ['profile:read']);
    expectError(await endSession(user.accessToken, minted.id), 404, 'NOT_FOUND');
    expectData(await invoke(routes.getProfile, { token: minted.token }));
  });

  it.each([
    ['a random uuid', randomUUID()],
    ['a string that is no uuid', 'not-a-uuid'],
    ['200 characters', 'x'.repeat(200)],
    ['unicode', 'séssion-🔑'],
  ])('answers 404 NOT_FOUND (never 400) for %s', async (_label, id) => {
    const user = await createUser();
    expectError(await endSession(user.accessToken, id), 404, 'NOT_FOUND');
  });

  it('answers 400 naming path.id for an id over 200 characters', async () => {
    const user = await createUser();
    expectError(await endSession(user.accessToken, 'x'.repeat(201)), 400, 'VALIDATION_FAILED', ['path.id']);
  });
});

describeSecurity(routes.endSession, {
  // Each request ends a second sign-in session of the user (made directly: the account may be inactive), so the let-through ones answer 204.
  request: async ({ user }) => {
    const second = await openLoginSession(db(), user.id, null);
    return { path: { id: second.sessionId } };
  },
  everyToken: true,
});
