import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { describe, expect, inject, it, vi } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { idempotencyKeys, invitations, users } from '../../lib/db/schema';
import { runMaintenance } from '../../lib/maintenance';
import * as userDomain from '../../lib/users';
import { createUser, type TestUser, uniqueEmail } from '../harness/actors';
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
  it('replays a registration: one user, the same answer, marked Idempotent-Replayed', async () => {
    const key = newKey();
    const body = registration();
    const first = await invoke(routes.register, { body, headers: withKey(key) });
    const data = expectData(first, first.status);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const second = await invoke(routes.register, { body, headers: withKey(key) });
    expect(second.status).toBe(first.status);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(second.headers['x-request-id']).toBeDefined();
    const rows = await db().select().from(users).where(eq(users.email, body.email));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).toBe(data.userProfile.id);
  });

  it('stores no token and not the raw key in clear', async () => {
    const key = newKey();
    const body = registration();
    const first = expectData(await invoke(routes.register, { body, headers: withKey(key) }));
    const login = { email: body.email, password: body.password };
    const loginKey = newKey();
    const signedIn = expectData(await invoke(routes.login, { body: login, headers: withKey(loginKey) }));
    const replay = await invoke(routes.login, { body: login, headers: withKey(loginKey) });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data.accessToken).toBe(signedIn.accessToken);

    const stored = JSON.stringify(await db().select().from(idempotencyKeys));
    for (const secret of [
      key,
      loginKey,
      first.accessToken,
      first.refreshToken,
      signedIn.accessToken,
      signedIn.refreshToken,
      body.email,
    ])
      expect(stored).not.toContain(secret);
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
    const taken = { ...registration(), email: user.email };
    const refused = await invoke(routes.register, { body: taken, headers: withKey(key) });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    const replayed = await invoke(routes.register, { body: taken, headers: withKey(key) });
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
