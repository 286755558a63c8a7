import { and, eq, sql } from 'drizzle-orm';
import { now } from '../clock';
import { db } from '../db/client';
import { sessions, users } from '../db/schema';
import { BadRequestError, NotFoundError, UnauthenticatedError } from '../http/errors';
import type { Actor } from '../http/types';
import { decoyPasswordHash, hashToken, verifyPassword } from '../secrets';
import { buildUserProfile } from '../users/profile';
import { signAccessToken } from './jwt';
import { canSignIn, startLoginSession } from './sessions';

/** Signs in with email and password; wrong credentials, inactive and extraction-only accounts get 401. */
export async function login(credentials: { email: string; password: string }, ip: string | null) {
  const [user] = await db().select().from(users).where(eq(users.email, credentials.email)).limit(1);
  // Always run the password hash, so response time does not reveal whether the email exists.
  const passwordMatches = await verifyPassword(credentials.password, user?.passwordHash ?? (await decoyPasswordHash()));
  if (!user || !passwordMatches) throw new UnauthenticatedError('Wrong email or password', 'INVALID_CREDENTIALS');
  if (!canSignIn(user)) throw new UnauthenticatedError('This account cannot sign in', 'ACCOUNT_INACTIVE');
  const tokens = await startLoginSession(db(), user.id, ip);
  return { ...tokens, userProfile: await buildUserProfile(user.id) };
}

/** A new access token for a refresh token; the refresh token itself stays the same. */
export async function refreshAccessToken(refreshToken: string) {
  const [row] = await db()
    .select({ sessionId: sessions.id, userId: sessions.userId, expiresAt: sessions.expiresAt, user: users })
    .from(sessions)
    .leftJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, hashToken(refreshToken)), eq(sessions.kind, 'login')))
    .limit(1);
  if (!row) throw new NotFoundError('Unknown refresh token');
  if (row.expiresAt <= now()) throw new BadRequestError('The refresh token has expired', 'TOKEN_EXPIRED');
  if (!row.user || !canSignIn(row.user)) throw new BadRequestError('The user of this refresh token no longer exists', 'USER_GONE');
  const [{ token: accessToken }] = await Promise.all([
    signAccessToken({ userId: row.userId, sessionId: row.sessionId }),
    db().update(users).set({ lastActiveAt: now(), updatedAt: sql`${users.updatedAt}` }).where(eq(users.id, row.userId)),
  ]);
  return { accessToken, refreshToken };
}

/** Ends the session of the bearer token (sign-in session or legacy token). */
export async function logout(actor: Actor): Promise<Record<string, never>> {
  await db().delete(sessions).where(and(eq(sessions.id, actor.session.id), eq(sessions.userId, actor.user.id)));
  return {};
}
