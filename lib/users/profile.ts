import { eq, sql } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
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
const cache = new Map<string, { profile: UserProfile; expiresAt: Date }>();

/**
 * The cached profile is shared by every request that reads it within the minute, so it is frozen
 * (deepFreeze): the answer's JSON is then made once per entry, not once per request
 * (lib/http/response-envelope.ts).
 */
export async function cachedUserProfile(userId: string): Promise<UserProfile> {
  const hit = cache.get(userId);
  if (hit && hit.expiresAt > now()) return hit.profile;
  const profile = deepFreeze(await buildUserProfile(userId));
  cache.set(userId, { profile, expiresAt: addSeconds(now(), PROFILE_CACHE_SECONDS) });
  if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
  return profile;
}

/** Called by every change to a user so this process never serves its stale profile. */
export function forgetCachedProfile(userId: string): void {
  cache.delete(userId);
}
