import { eq, sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { rawRows } from '../../lib/db/raw-rows';
import { users } from '../../lib/db/schema';
import {
  cachedProfileCount,
  cachedUserProfile,
  PROFILE_CACHE_MAX_ENTRIES,
  PROFILE_CACHE_SECONDS,
} from '../../lib/users/profile';

/**
 * The profile cache of GET /user/profile (lib/users/profile.ts) holds at most
 * PROFILE_CACHE_MAX_ENTRIES profiles, none served past PROFILE_CACHE_SECONDS: a warm process that
 * serves more users than that keeps a bounded cache (issue 36).
 */
const MORE_THAN_THE_BOUND = PROFILE_CACHE_MAX_ENTRIES + 50;

/** Users written straight as rows in one statement (signing up 10,000 users would take minutes). */
async function insertUsers(count: number, tag: string): Promise<string[]> {
  const rows = await rawRows<{ id: string }>(
    db(),
    sql`
    insert into ${users} (id, email, name, password_hash, created_at, updated_at)
    select gen_random_uuid(), 'bound-' || ${tag} || '-' || n || '@example.com', 'Bound ' || n, 'not-a-hash', now(), now()
    from generate_series(1, ${count}) as n
    returning id`,
  );
  return rows.map((row) => row.id);
}

/** Reads every profile through the cache, a hundred at a time. */
async function readAll(ids: string[]): Promise<void> {
  for (let at = 0; at < ids.length; at += 100) await Promise.all(ids.slice(at, at + 100).map(cachedUserProfile));
}

describe('profile cache bound', () => {
  afterEach(() => testClock.reset());

  it('keeps at most PROFILE_CACHE_MAX_ENTRIES profiles, dropping the least recently read', async () => {
    // Prepare
    const ids = await insertUsers(MORE_THAN_THE_BOUND, 'size');
    const [first, last] = [ids[0]!, ids.at(-1)!];

    // Act: read past the bound
    await readAll(ids);

    // Assert: the count stays at the bound
    expect(cachedProfileCount()).toBe(PROFILE_CACHE_MAX_ENTRIES);
    // and the first read was dropped (a change behind the cache shows), the last one kept (it does not)
    await db().update(users).set({ name: 'Renamed' }).where(sql`${users.id} in (${first}, ${last})`);
    expect((await cachedUserProfile(first)).name).toBe('Renamed');
    expect((await cachedUserProfile(last)).name).not.toBe('Renamed');
    expect(cachedProfileCount()).toBe(PROFILE_CACHE_MAX_ENTRIES);
  }, 180_000);

  it(`never serves a profile older than ${PROFILE_CACHE_SECONDS} seconds`, async () => {
    // Prepare: cached, then changed behind the cache
    const [id] = await insertUsers(1, 'age');
    await cachedUserProfile(id!);
    await db().update(users).set({ name: 'Aged' }).where(eq(users.id, id!));
    testClock.advance(PROFILE_CACHE_SECONDS - 1);
    expect((await cachedUserProfile(id!)).name).not.toBe('Aged');

    // Act: past the age
    testClock.advance(2);

    // Assert
    expect((await cachedUserProfile(id!)).name).toBe('Aged');
  });
});
