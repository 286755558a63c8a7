import { and, eq } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { LoginEmailDto } from '../../schemas/auth/login';
import type { RefreshTokenDto } from '../../schemas/auth/refresh-token';
import { recordMemberAudit } from '../audit/record';
import { provenUser } from '../audit/scope';
import { now } from '../clock';
import { db } from '../db/client';
import { sessions, users } from '../db/schema/users';
import { transaction } from '../db/transaction';
import { RateLimitedError } from '../errors';
import { addressGroup } from '../rate-limit/address-group';
import { consumeRateLimit, type RateLimitRule, resetRateLimit, uncountRateLimit } from '../rate-limit';
import { decoyPasswordHash, hashToken, verifyPassword } from '../secrets';
import { markActive } from '../users/mark-active';
import { buildUserProfile } from '../users/profile';
import type { Actor } from './actor';
import {
  AccountCannotSignInError,
  InvalidCredentialsError,
  RefreshTokenExpiredError,
  RefreshTokenUserGoneError,
  UnknownRefreshTokenError,
} from './errors';
import { signAccessToken } from './jwt';
import { canSignIn, type ClientInfo, openLoginSession } from './sessions';
import { signInAccount } from './sign-in-addresses';

/** Failed sign-ins allowed per account per client address, and per client address, in one window. */
export const SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS = 10;
export const SIGN_IN_FAILURES_PER_ADDRESS = 100;
export const SIGN_IN_FAILURE_WINDOW_SECONDS = 15 * 60;
/**
 * Failed sign-ins allowed per account from all addresses together, in windows of growing length:
 * past 20 in a quarter hour the account waits for the quarter to end, past 40 in an hour for the
 * hour, past 80 in a day for the day. Each tier makes the next wait longer; known addresses are
 * never held by them.
 */
export const SIGN_IN_FAILURES_PER_ACCOUNT = [
  { limit: 20, windowSeconds: 15 * 60 },
  { limit: 40, windowSeconds: 60 * 60 },
  { limit: 80, windowSeconds: 24 * 60 * 60 },
] as const;

/**
 * The counters of a sign-in attempt. Addresses are counted by their group (an IPv6 /64, see
 * `addressGroup`). From an address the account signed in from before (known), only the
 * account+address counter applies: the owner is neither locked out by guesses from elsewhere nor
 * by other accounts' failures behind the same NAT, and guesses from there still stop at 10.
 */
function signInFailureRules(email: string, ip: string | null, known: boolean) {
  const account = email.toLowerCase();
  const group = addressGroup(ip);
  const accountAndAddress: RateLimitRule = {
    key: `login-failures:account:${account}:address:${group}`,
    limit: SIGN_IN_FAILURES_PER_ACCOUNT_AND_ADDRESS,
    windowSeconds: SIGN_IN_FAILURE_WINDOW_SECONDS,
  };
  if (known) return { accountAndAddress, others: [] };
  const address: RateLimitRule = {
    key: `login-failures:address:${group}`,
    limit: SIGN_IN_FAILURES_PER_ADDRESS,
    windowSeconds: SIGN_IN_FAILURE_WINDOW_SECONDS,
  };
  const accountTiers = SIGN_IN_FAILURES_PER_ACCOUNT.map(({ limit, windowSeconds }) => ({
    key: `login-failures:account:${account}:${windowSeconds}s`,
    limit,
    windowSeconds,
  }));
  return { accountAndAddress, others: [address, ...accountTiers] };
}

/**
 * Signs in with email and password; wrong credentials, inactive and extraction-only accounts get 401.
 * Guessing is throttled (docs/decisions.md, issue 31): per account per client address (10 in 15
 * minutes), per client address (100 in 15 minutes) and per account from all addresses (20 a quarter
 * hour, 40 an hour, 80 a day), then 429 RATE_LIMITED with Retry-After (even for the right
 * password) until the refusing window ends. An address the account signed in from in the last 90
 * days is held only by its own account+address counter. The attempt is counted before the password
 * is checked (so concurrent guesses cannot all slip under the limit) and given back when it was
 * refused or succeeded; a success also clears the account+address count (the other counters keep
 * what others did). Unknown addresses count like known ones.
 */
export async function login({ client }: { client: ClientInfo | null }, credentials: z.output<typeof LoginEmailDto>) {
  const ip = client?.ip ?? null;
  const { user, known } = await signInAccount(credentials.email, ip);
  const rules = signInFailureRules(credentials.email, ip, known);
  const attempt = await consumeRateLimit([rules.accountAndAddress, ...rules.others]);
  if (!attempt.allowed) {
    await uncountRateLimit(attempt.counted);
    throw new RateLimitedError(attempt.retryAfterSeconds);
  }
  // Always run the password hash, so response time does not reveal whether the email exists.
  const passwordMatches = await verifyPassword(credentials.password, user?.passwordHash ?? (await decoyPasswordHash()));
  if (!user || !passwordMatches) throw new InvalidCredentialsError();
  // The right password: not a failed guess (an inactive account is told so only now).
  await Promise.all([
    resetRateLimit([rules.accountAndAddress.key]),
    uncountRateLimit(attempt.counted.filter((c) => c.key !== rules.accountAndAddress.key)),
  ]);
  if (!canSignIn(user)) throw new AccountCannotSignInError();
  const tokens = await transaction(async (tx) => {
    const { sessionId, tokens } = await openLoginSession(tx, user.id, client);
    // The request has no caller yet: the password just proved who signs in.
    await recordMemberAudit(tx, user.id, {
      action: 'auth.signed_in',
      target: { type: 'session', id: sessionId },
      actor: provenUser(user.id, sessionId),
    });
    return tokens;
  });
  return { ...tokens, userProfile: await buildUserProfile(user.id) };
}

/** A new access token for a refresh token; the refresh token itself stays the same. */
export async function refreshToken(input: z.output<typeof RefreshTokenDto>) {
  const { refreshToken } = input;
  const [row] = await db()
    .select({ sessionId: sessions.id, userId: sessions.userId, expiresAt: sessions.expiresAt, user: users })
    .from(sessions)
    .leftJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, hashToken(refreshToken)), eq(sessions.kind, 'login')))
    .limit(1);
  if (!row) throw new UnknownRefreshTokenError();
  if (row.expiresAt <= now()) throw new RefreshTokenExpiredError();
  if (!row.user || !canSignIn(row.user)) throw new RefreshTokenUserGoneError();
  const { sessionId, userId } = row;
  await transaction(async (tx) => {
    const [stillThere] = await Promise.all([
      // The session's last use (access tokens are not stamped per request: a refresh is every 15 minutes at most).
      tx.update(sessions).set({ lastUsedAt: now() }).where(eq(sessions.id, sessionId)).returning({ id: sessions.id }),
      markActive(tx, userId),
    ]);
    // Ended since it was read (logout, a password reset): nothing was refreshed, nothing is recorded.
    if (stillThere.length === 0) throw new UnknownRefreshTokenError();
    // The refresh token proves who asks (the route takes no bearer token).
    await recordMemberAudit(tx, userId, {
      action: 'auth.session.refreshed',
      target: { type: 'session', id: sessionId },
      actor: provenUser(userId, sessionId),
    });
  });
  const { token: accessToken } = await signAccessToken({ userId, sessionId });
  return { accessToken, refreshToken };
}

/** Ends the session of the bearer token (sign-in session or legacy token). */
export async function logout({ actor }: { actor: Actor }): Promise<Record<string, never>> {
  await transaction(async (tx) => {
    const [ended] = await tx
      .delete(sessions)
      .where(and(eq(sessions.id, actor.session.id), eq(sessions.userId, actor.user.id)))
      .returning({ id: sessions.id, kind: sessions.kind });
    // Already ended by a concurrent request, which recorded it.
    if (!ended) return;
    await recordMemberAudit(tx, actor.user.id, {
      action: 'auth.signed_out',
      target: { type: 'session', id: ended.id },
      metadata: { kind: ended.kind },
    });
  });
  return {};
}

export { generateToken, listTokens, revokeToken, updateTokenScopes } from './automation-tokens';
export { changePassword } from './change-password';
export { resetPassword } from './reset-password';
export { endSession, listSessions } from './sessions';
