import { eq, sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import { now } from '../clock';
import { deepFreeze } from '../frozen';
import { db, type Executor, preparedPerDatabase } from '../db/client';
import { users } from '../db/schema/users';
import { toOrganizationDetails } from '../organizations/entity';
import { UserNotFoundError } from './errors';

const profileQuery = (executor: Executor, userId: string | ReturnType<typeof sql.placeholder>) =>
  executor.query.users.findFirst({
    where: eq(users.id, userId),
    with: { memberships: { with: { organization: true }, orderBy: (m, { asc }) => [asc(m.createdAt)] } },
  });

/** The profile statement, prepared; a transaction runs it unprepared. */
const preparedProfile = preparedPerDatabase((database) =>
  profileQuery(database, sql.placeholder('userId')).prepare('user_profile'),
);

function loadProfileRow(userId: string, executor: Executor) {
  if (executor !== db()) return profileQuery(executor, userId);
  return preparedProfile().execute({ userId });
}

/**
 * The contract's UserEntity: the profile and every organization of the user with the user's
 * permission and the billing summary. One SQL statement (drizzle's relational query).
 */
export async function buildUserProfile(userId: string, executor: Executor = db()) {
  const user = await loadProfileRow(userId, executor);
  if (!user) throw new UserNotFoundError();
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    phoneNumbers: user.phoneNumbers,
    isEmailVerified: user.isEmailVerified,
    onboardingStatus: user.onboardingStatus,
    onboardingStep: user.onboardingStep,
    userType: user.userType,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
    organizations: user.memberships.map((m) => toOrganizationDetails(m.organization, m.role)),
  };
}

export type UserProfile = Awaited<ReturnType<typeof buildUserProfile>>;

/** The contract lets GET /user/profile answer from a cache up to 60 seconds old. */
export const PROFILE_CACHE_SECONDS = 60;
/**
 * Profiles this process keeps at most: the least recently read goes first. A profile is about
 * 2 KB plus its JSON (more for a user of many organizations), so 10,000 hold about 40 MB at most;
 * one older than PROFILE_CACHE_SECONDS is never served (it is read again and replaced).
 */
export const PROFILE_CACHE_MAX_ENTRIES = 10_000;
const cache = new LRUCache<string, UserProfile>({
  max: PROFILE_CACHE_MAX_ENTRIES,
  ttl: PROFILE_CACHE_SECONDS * 1000,
  // Ages follow the service's clock, which the tests move (lib/clock.ts).
  perf: { now: () => now().getTime() },
  // Read the clock on every check rather than keep a reading for a millisecond on a timer.
  ttlResolution: 0,
});

/**
 * The cached profile is shared by every request that reads it within the minute, so it is frozen
 * (deepFreeze): the answer's JSON is then made once per entry, not once per request
 * (lib/http/response-envelope.ts).
 */
export async function cachedUserProfile(userId: string): Promise<UserProfile> {
  const hit = cache.get(userId);
  if (hit) return hit;
  const profile = deepFreeze(await buildUserProfile(userId));
  cache.set(userId, profile);
  return profile;
}

/** How many profiles this process holds (the tests of its bound). */
export function cachedProfileCount(): number {
  return cache.size;
}

/** Called by every change to a user so this process never serves its stale profile. */
export function forgetCachedProfile(userId: string): void {
  cache.delete(userId);
}
