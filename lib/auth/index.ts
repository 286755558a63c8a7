import { and, eq, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { LoginEmailDto } from '../../schemas/auth/login';
import type { RefreshTokenDto } from '../../schemas/auth/refresh-token';
import { recordMemberAudit, provenUser } from '../audit';
import { now } from '../clock';
import { db } from '../db/client';
import { sessions, users } from '../db/schema';
import { transaction } from '../db/transaction';
import { RateLimitedError } from '../errors';
import { consumeRateLimit, resetRateLimit, uncountRateLimit } from '../rate-limit';
import { decoyPasswordHash, hashToken, verifyPassword } from '../secrets';
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

/** Failed sign-ins allowed per account (address) per client IP, and per client IP, in one window. */
export const SIGN_IN_FAILURES_PER_ACCOUNT_AND_IP = 10;
export const SIGN_IN_FAILURES_PER_IP = 100;
export const SIGN_IN_FAILURE_WINDOW_SECONDS = 15 * 60;

function signInFailureRules(email: string, ip: string | null) {
  const client = ip ?? 'unknown';
  return {
    accountAndIp: {
      key: `login-failures:account:${email.toLowerCase()}:ip:${client}`,
      limit: SIGN_IN_FAILURES_PER_ACCOUNT_AND_IP,
      windowSeconds: SIGN_IN_FAILURE_WINDOW_SECONDS,
    },
    ip: {
      key: `login-failures:ip:${client}`,
      limit: SIGN_IN_FAILURES_PER_IP,
      windowSeconds: SIGN_IN_FAILURE_WINDOW_SECONDS,
    },
  };
}

/**
 * Signs in with email and password; wrong credentials, inactive and extraction-only accounts get 401.
 * Guessing is throttled: at most 10 failed sign-ins per address per client IP and 100 per client
 * IP in a 15-minute window, then 429 RATE_LIMITED with Retry-After (even for the right password)
 * until the window ends. The attempt is counted before the password is checked (so concurrent
 * guesses cannot all slip under the limit) and given back when it was refused or succeeded; a
 * success also clears the address+IP count. Unknown addresses count like known ones.
 */
export async function login({ client }: { client: ClientInfo | null }, credentials: z.output<typeof LoginEmailDto>) {
  const rules = signInFailureRules(credentials.email, client?.ip ?? null);
  const attempt = await consumeRateLimit([rules.accountAndIp, rules.ip]);
  if (!attempt.allowed) {
    await uncountRateLimit(attempt.counted);
    throw new RateLimitedError(attempt.retryAfterSeconds);
  }
  const [user] = await db().select().from(users).where(eq(users.email, credentials.email)).limit(1);
  // Always run the password hash, so response time does not reveal whether the email exists.
  const passwordMatches = await verifyPassword(credentials.password, user?.passwordHash ?? (await decoyPasswordHash()));
  if (!user || !passwordMatches) throw new InvalidCredentialsError();
  // The right password: not a failed guess (an inactive account is told so only now).
  await Promise.all([
    resetRateLimit([rules.accountAndIp.key]),
    uncountRateLimit(attempt.counted.filter((c) => c.key === rules.ip.key)),
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
      tx
        .update(users)
        .set({ lastActiveAt: now(), updatedAt: sql`${users.updatedAt}` })
        .where(eq(users.id, userId)),
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
export { endSession, listSessions } from './sessions';
