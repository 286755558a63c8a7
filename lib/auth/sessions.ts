import { and, eq, gt, inArray, isNull, ne, sql } from 'drizzle-orm';
import { addDays, now } from '../clock';
import { config } from '../config';
import { db, type Executor } from '../db/client';
import { sessions, users } from '../db/schema';
import { UnauthenticatedError } from '../http/errors';
import type { Actor } from '../http/types';
import { hashToken, newOpaqueToken } from '../secrets';
import { signAccessToken, verifyAccessToken } from './jwt';
import type { Scope } from './scopes';

export const REFRESH_TOKEN_PREFIX = 'cebs_rt_';
export const AUTOMATION_TOKEN_PREFIX = 'cebs_at_';
export const LEGACY_TOKEN_PREFIX = 'cebs_lt_';

type UserRow = typeof users.$inferSelect;

/** Users who may hold a session: active, not deleted, not an extraction-only custodian account. */
export function canSignIn(user: Pick<UserRow, 'isActive' | 'deletedAt' | 'accountKind'>): boolean {
  return user.isActive && user.deletedAt === null && user.accountKind === 'standard';
}

/** Starts a sign-in session: a refresh token (stored hashed, 30 days) and a short access token. */
export async function startLoginSession(executor: Executor, userId: string, ip: string | null) {
  const refreshToken = newOpaqueToken(REFRESH_TOKEN_PREFIX);
  const [session] = await executor
    .insert(sessions)
    .values({
      userId,
      kind: 'login',
      tokenHash: hashToken(refreshToken),
      expiresAt: addDays(now(), config().REFRESH_TOKEN_TTL_DAYS),
      createdIp: ip,
    })
    .returning({ id: sessions.id });
  await executor.update(users).set({ lastActiveAt: now(), updatedAt: sql`${users.updatedAt}` }).where(eq(users.id, userId));
  const { token: accessToken } = await signAccessToken({ userId, sessionId: session!.id });
  return { accessToken, refreshToken };
}

type SessionKind = (typeof sessions.$inferSelect)['kind'];

/**
 * Ends a user's credentials of the given kinds (all by default), except `exceptSessionId`: sign-in
 * sessions and legacy tokens are deleted (their refresh and access tokens stop at once), automation
 * tokens are revoked (they stay listed as revoked). Used on password reset and change, login-email
 * change and account takeover. Returns how many were ended.
 */
export async function endSessionsOfUser(executor: Executor, userId: string, options: { kinds?: SessionKind[]; exceptSessionId?: string } = {}): Promise<number> {
  const kinds = options.kinds ?? ['login', 'legacy', 'automation'];
  const except = options.exceptSessionId ? [ne(sessions.id, options.exceptSessionId)] : [];
  const deletable = kinds.filter((kind) => kind !== 'automation');
  const [deleted, revoked] = await Promise.all([
    deletable.length
      ? executor.delete(sessions).where(and(eq(sessions.userId, userId), inArray(sessions.kind, deletable), ...except)).returning({ id: sessions.id })
      : Promise.resolve([]),
    kinds.includes('automation')
      ? executor
          .update(sessions)
          .set({ revokedAt: now() })
          .where(and(eq(sessions.userId, userId), eq(sessions.kind, 'automation'), isNull(sessions.revokedAt), ...except))
          .returning({ id: sessions.id })
      : Promise.resolve([]),
  ]);
  return deleted.length + revoked.length;
}

const actorColumns = {
  sessionId: sessions.id,
  kind: sessions.kind,
  scopes: sessions.scopes,
  userId: users.id,
  email: users.email,
  name: users.name,
  isSuperAdmin: users.isSuperAdmin,
  isEmailVerified: users.isEmailVerified,
  isActive: users.isActive,
  deletedAt: users.deletedAt,
  accountKind: users.accountKind,
};

/**
 * Resolves a bearer token to its user and session in one SQL round trip. A JWT counts only while
 * its sign-in session exists; an automation or legacy token only while unrevoked and unexpired
 * (its last use is stamped in the same statement). Anything else is 401.
 */
export async function authenticateBearer(token: string): Promise<Actor> {
  const at = now();
  let row: { [K in keyof typeof actorColumns]: unknown } | undefined;
  if (token.startsWith(AUTOMATION_TOKEN_PREFIX) || token.startsWith(LEGACY_TOKEN_PREFIX)) {
    [row] = await db()
      .update(sessions)
      .set({ lastUsedAt: at })
      .from(users)
      .where(
        and(
          eq(sessions.tokenHash, hashToken(token)),
          eq(users.id, sessions.userId),
          inArray(sessions.kind, ['automation', 'legacy']),
          isNull(sessions.revokedAt),
          gt(sessions.expiresAt, at),
        ),
      )
      .returning(actorColumns);
  } else {
    const claims = await verifyAccessToken(token);
    if (!claims) throw new UnauthenticatedError('The access token is invalid or expired');
    [row] = await db()
      .select(actorColumns)
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(
        and(
          eq(sessions.id, claims.sessionId),
          eq(sessions.userId, claims.userId),
          eq(sessions.kind, 'login'),
          isNull(sessions.revokedAt),
          gt(sessions.expiresAt, at),
        ),
      )
      .limit(1);
  }
  if (!row) throw new UnauthenticatedError('The token is unknown, revoked or expired');
  const found = row as {
    sessionId: string;
    kind: Actor['session']['kind'];
    scopes: string[] | null;
    userId: string;
    email: string;
    name: string;
    isSuperAdmin: boolean;
    isEmailVerified: boolean;
  } & Pick<UserRow, 'isActive' | 'deletedAt' | 'accountKind'>;
  if (!canSignIn(found)) throw new UnauthenticatedError('This account is inactive', 'ACCOUNT_INACTIVE');
  if (found.kind === 'automation' && (found.scopes ?? []).length === 0) {
    throw new UnauthenticatedError('This automation token is disabled (it has no scopes)');
  }
  return {
    user: { id: found.userId, email: found.email, name: found.name, isSuperAdmin: found.isSuperAdmin, isEmailVerified: found.isEmailVerified },
    session: { id: found.sessionId, kind: found.kind, scopes: found.kind === 'automation' ? (found.scopes as Scope[]) : null },
  };
}
