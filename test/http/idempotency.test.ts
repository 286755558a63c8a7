import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, inject, it, vi } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { idempotencyKeys, invitations, users } from '../../lib/db/schema';
import { runMaintenance } from '../../lib/maintenance';
import * as userDomain from '../../lib/users';
import { routeList } from '../../functions/routes';
import { idempotencyKeyHash } from '../../lib/idempotency';
import { createUser, emailsTo, type TestUser, uniqueEmail } from '../harness/actors';
import { auditEventsOfRequest, newRequestId } from '../harness/audit';
import { holdRows } from '../harness/faults';
import { expectData, expectError, invoke } from '../harness/invoke';

const onServer = inject('databaseTemplate').kind === 'postgres';
const newKey = () => `key-${randomBytes(8).toString('hex')}`;
const withKey = (key: string) => ({ 'idempotency-key': key });

const registration = () => ({
  name: 'Retry Person',
  email: uniqueEmail('retry'),
  password: `pw-${randomBytes(6).toString('hex')}`,
  acceptTerms: true,
  organizationName: `Firm ${randomBytes(5).toString('hex')}`,
});

const patchProfile = (user: TestUser, body: unknown, key?: string) =>
  invoke(routes.updateProfile, { token: user.accessToken, body, headers: key ? withKey(key) : {} });

const invite = (owner: TestUser, emails: string[], key: string) =>
  invoke(routes.inviteUsers, {
    token: owner.accessToken,
    path: { orgId: owner.organizationId },
    body: { emails },
    headers: withKey(key),
  });

const invitationsTo = (email: string) => db().select().from(invitations).where(eq(invitations.email, email));

describe('Idempotency-Key on writes', () => {
  it('replays a forgot-password request: one email, the same answer, marked Idempotent-Replayed', async () => {
    const user = await createUser();
    const key = newKey();
    const body = { email: user.email };
    const ip = '198.51.100.60';
    const first = await invoke(routes.sendForgotPasswordLink, { body, ip, headers: withKey(key) });
    expectData(first);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const second = await invoke(routes.sendForgotPasswordLink, { body, ip, headers: withKey(key) });
    expect(second.status).toBe(first.status);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(second.headers['x-request-id']).toBeDefined();
    expect(emailsTo(user.email).filter((m) => /password/i.test(m.subject))).toHaveLength(1);
  });

  it('scopes an anonymous key to the client address: another client with the same key runs on its own', async () => {
    const key = 'reg-1';
    const mine = await createUser();
    const theirs = await createUser();
    const ask = (email: string, ip: string) =>
      invoke(routes.sendForgotPasswordLink, { body: { email }, ip, headers: withKey(key) });
    expectData(await ask(mine.email, '198.51.100.61'));
    // Another address, another body, the same key: runs (no 409 REUSED), and sends its own email.
    const other = await ask(theirs.email, '198.51.100.62');
    expectData(other);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(emailsTo(theirs.email).filter((m) => /password/i.test(m.subject))).toHaveLength(1);
    // The same IPv6 /64 is one client; another /64 is another.
    expectData(await ask(mine.email, '2001:db8:61:1::1'));
    expect((await ask(mine.email, '2001:db8:61:1:ffff::2')).headers['idempotent-replayed']).toBe('true');
    expectError(await ask(theirs.email, '2001:db8:61:1::3'), 409, 'IDEMPOTENCY_KEY_REUSED');
    expect((await ask(theirs.email, '2001:db8:61:2::1')).headers['idempotent-replayed']).toBeUndefined();
  });

  it('claims no key for a request the rate limit refused', async () => {
    const ip = '198.51.100.63';
    const ask = (key?: string) =>
      invoke(routes.checkEmailAvailability, {
        body: { email: uniqueEmail('free') },
        ip,
        headers: key ? withKey(key) : {},
      });
    for (let i = 0; i < routes.checkEmailAvailability.rateLimit.perMinute; i += 1) expectData(await ask());
    const key = newKey();
    expectError(await ask(key), 429, 'RATE_LIMITED');
    const rows = await db()
      .select()
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.route, routes.checkEmailAvailability.operationId));
    const claimed = idempotencyKeyHash(`anonymous:${ip}`, routes.checkEmailAvailability.operationId, key);
    expect(rows.map((r) => r.keyHash)).not.toContain(claimed);
  });

  it('replays an invitation: one invitation, one email', async () => {
    const owner = await createUser();
    const email = uniqueEmail('invitee');
    const key = newKey();
    const first = await invite(owner, [email], key);
    expectData(first, 201);
    const second = await invite(owner, [email], key);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await invitationsTo(email)).toHaveLength(1);
  });

  it('replays a PATCH, and a DELETE whose second run would be 404', async () => {
    const user = await createUser();
    const key = newKey();
    const first = await patchProfile(user, { onboardingStep: 3 }, key);
    expectData(first);
    await db().update(users).set({ onboardingStep: 9 }).where(eq(users.id, user.id));
    const second = await patchProfile(user, { onboardingStep: 3 }, key);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    // Replayed, not run again: the row keeps the later change.
    const [row] = await db().select().from(users).where(eq(users.id, user.id));
    expect(row!.onboardingStep).toBe(9);

    const owner = await createUser();
    const email = uniqueEmail('invitee');
    expectData(await invite(owner, [email], newKey()), 201);
    const [invitation] = await invitationsTo(email);
    const deleteKey = newKey();
    const remove = () =>
      invoke(routes.deleteInvitation, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId, invitationId: invitation!.id },
        headers: withKey(deleteKey),
      });
    const deleted = await remove();
    expectData(deleted);
    const again = await remove();
    expect(again.status).toBe(deleted.status);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(deleted.body);
    // Without the key the second delete is the 404 a retry would have met.
    expectError(
      await invoke(routes.deleteInvitation, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId, invitationId: invitation!.id },
      }),
      404,
      'NOT_FOUND',
    );
  });

  it('refuses the key with another body; another route or another caller runs independently', async () => {
    const user = await createUser();
    const other = await createUser();
    const key = newKey();
    expectData(await patchProfile(user, { onboardingStep: 1 }, key));
    expectError(await patchProfile(user, { onboardingStep: 2 }, key), 409, 'IDEMPOTENCY_KEY_REUSED');

    // Another caller with the same key and body: runs, sees its own answer.
    const theirs = await patchProfile(other, { onboardingStep: 1 }, key);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(expectData(theirs).id).toBe(other.id);

    // Another route with the same key runs.
    const invited = await invite(user, [uniqueEmail('invitee')], key);
    expect(invited.status).toBe(201);
    expect(invited.headers['idempotent-replayed']).toBeUndefined();
  });

  it('replays a refusal of the handler, but stores nothing for a request refused before it', async () => {
    const user = await createUser();
    const key = newKey();
    const unknown = { orgId: user.organizationId, invitationId: '00000000-0000-4000-8000-000000000000' };
    const remove = () =>
      invoke(routes.deleteInvitation, { token: user.accessToken, path: unknown, headers: withKey(key) });
    const refused = await remove();
    expectError(refused, 404, 'NOT_FOUND');
    const replayed = await remove();
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(refused.body);

    const validationKey = newKey();
    expectError(await patchProfile(user, { onboardingStep: -1 }, validationKey), 400, 'VALIDATION_FAILED');
    const corrected = await patchProfile(user, { onboardingStep: 4 }, validationKey);
    expect(expectData(corrected).onboardingStep).toBe(4);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not store a 5xx: the retry runs', async () => {
    const user = await createUser();
    const key = newKey();
    const failing = vi.spyOn(userDomain, 'updateProfile').mockRejectedValueOnce(new Error('processor exploded'));
    try {
      expectError(await patchProfile(user, { onboardingStep: 5 }, key), 500, 'INTERNAL');
    } finally {
      failing.mockRestore();
    }
    const retried = await patchProfile(user, { onboardingStep: 5 }, key);
    expect(expectData(retried).onboardingStep).toBe(5);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('lets a lapsed claim be taken again, and a key run again after 24 hours; maintenance prunes', async () => {
    const user = await createUser();
    const key = newKey();
    expectData(await patchProfile(user, { onboardingStep: 6 }, key));
    // A request that died while running: its claim lapses after the function timeout.
    const mine = eq(idempotencyKeys.scope, `user:${user.id}`);
    await db()
      .update(idempotencyKeys)
      .set({ status: 'running', responseSealed: null, responseStatus: null })
      .where(mine);
    expectError(await patchProfile(user, { onboardingStep: 6 }, key), 409, 'IDEMPOTENCY_KEY_IN_USE');
    testClock.advance(60);
    const rerun = await patchProfile(user, { onboardingStep: 6 }, key);
    expect(rerun.headers['idempotent-replayed']).toBeUndefined();
    expectData(rerun);
    expect((await patchProfile(user, { onboardingStep: 6 }, key)).headers['idempotent-replayed']).toBe('true');

    // 24 hours on (the row's expiry moved: the access token would not live that long).
    const dayAgo = () =>
      db()
        .update(idempotencyKeys)
        .set({ expiresAt: new Date(Date.now() - 60_000) })
        .where(mine);
    await dayAgo();
    const afterDay = await patchProfile(user, { onboardingStep: 7 }, key);
    expect(expectData(afterDay).onboardingStep).toBe(7);
    expect(afterDay.headers['idempotent-replayed']).toBeUndefined();

    await dayAgo();
    await runMaintenance();
    expect(await db().select().from(idempotencyKeys).where(mine)).toEqual([]);
  });

  it('refuses a malformed key naming the header', async () => {
    const user = await createUser();
    for (const key of ['', 'k'.repeat(256), 'clé-ünïcode'])
      expectError(
        await invoke(routes.updateProfile, {
          token: user.accessToken,
          body: { onboardingStep: 1 },
          headers: withKey(key),
        }),
        400,
        'VALIDATION_FAILED',
        ['headers.idempotency-key'],
      );
    expectData(await patchProfile(user, { onboardingStep: 1 }, 'k'.repeat(255)));
  });

  it('ignores the key on GET', async () => {
    const user = await createUser();
    const key = newKey();
    const first = await invoke(routes.getProfile, { token: user.accessToken, headers: withKey(key) });
    expectData(first);
    const second = await invoke(routes.getProfile, { token: user.accessToken, headers: withKey(key) });
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(
      await db()
        .select()
        .from(idempotencyKeys)
        .where(eq(idempotencyKeys.scope, `user:${user.id}`)),
    ).toEqual([]);
  });
});

describe.runIf(onServer)('Idempotency-Key under concurrency (PostgreSQL server)', () => {
  it('answers 409 IN_USE while the first request runs, then replays its answer', async () => {
    const user = await createUser();
    const key = newKey();
    // Holds the user's row: the first request's update waits on it.
    const holding = holdRows(db(), sql`select 1 from users where id = ${user.id} for update`);
    await holding.taken;
    const first = patchProfile(user, { onboardingStep: 8 }, key);
    for (let i = 0; i < 100; i++) {
      const rows = await db()
        .select()
        .from(idempotencyKeys)
        .where(eq(idempotencyKeys.scope, `user:${user.id}`));
      if (rows.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expectError(await patchProfile(user, { onboardingStep: 8 }, key), 409, 'IDEMPOTENCY_KEY_IN_USE');
    await holding.release();
    const answered = await first;
    expect(expectData(answered).onboardingStep).toBe(8);
    const third = await patchProfile(user, { onboardingStep: 8 }, key);
    expect(third.headers['idempotent-replayed']).toBe('true');
    expect(third.body).toEqual(answered.body);
  });
});

describe('Idempotency-Key on the routes of a credential: ignored, nothing stored', () => {
  const credentialRoutes = routeList.filter((r) => r.credential).map((r) => r.operationId);

  it('signs in twice with one key: two sessions, each audited, never a replay of the first tokens', async () => {
    const user = await createUser();
    const key = newKey();
    const signInWithKey = async () => {
      const requestId = newRequestId('login');
      const result = await invoke(routes.login, {
        body: { email: user.email, password: user.password },
        headers: { ...withKey(key), 'x-request-id': requestId },
      });
      expect(result.headers['idempotent-replayed']).toBeUndefined();
      return { data: expectData(result), events: await auditEventsOfRequest(requestId) };
    };
    const first = await signInWithKey();
    const second = await signInWithKey();
    expect(second.data.refreshToken).not.toBe(first.data.refreshToken);
    expect(second.data.accessToken).not.toBe(first.data.accessToken);
    for (const { events } of [first, second]) expect(events.map((e) => e.action)).toContain('auth.signed_in');
    expect(second.events[0]!.targetId).not.toBe(first.events[0]!.targetId);
  });

  it("counts wrong guesses sent with the victim's key, and never answers the victim's tokens", async () => {
    const user = await createUser();
    const key = newKey();
    const victim = expectData(
      await invoke(routes.login, { body: { email: user.email, password: user.password }, headers: withKey(key) }),
    );
    expectError(
      await invoke(routes.login, { body: { email: user.email, password: 'a-wrong-guess' }, headers: withKey(key) }),
      401,
      'INVALID_CREDENTIALS',
    );
    const again = expectData(
      await invoke(routes.login, { body: { email: user.email, password: user.password }, headers: withKey(key) }),
    );
    expect(again.refreshToken).not.toBe(victim.refreshToken);
  });

  it('mints a new automation token each time, whatever the key', async () => {
    const user = await createUser();
    const key = newKey();
    const mint = () =>
      invoke(routes.generateToken, {
        token: user.accessToken,
        body: { scopes: ['profile:read'] },
        headers: withKey(key),
      });
    const first = expectData(await mint());
    const second = await mint();
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(expectData(second).token).not.toBe(first.token);
  });

  it('stores nothing for any of them (register, login, refresh, generate-token)', async () => {
    const key = newKey();
    const body = registration();
    const registered = expectData(await invoke(routes.register, { body, headers: withKey(key) }));
    expectData(
      await invoke(routes.refreshToken, { body: { refreshToken: registered.refreshToken }, headers: withKey(key) }),
    );
    expectData(await invoke(routes.generateToken, { token: registered.accessToken, body: {}, headers: withKey(key) }));
    expect(credentialRoutes).toEqual(
      expect.arrayContaining(['login', 'register', 'refreshToken', 'generateToken', 'resetPassword']),
    );
    const stored = await db()
      .select({ route: idempotencyKeys.route })
      .from(idempotencyKeys)
      .where(sql`${idempotencyKeys.route} in ${credentialRoutes}`);
    expect(stored).toEqual([]);
  });
});
