import { and, desc, eq, gt, inArray, isNull, ne, sql } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { SessionIdPath } from '../../schemas/auth/sessions';
import { recordMemberAudit } from '../audit/record';
import { addDays, now } from '../clock';
import { config } from '../config';
import { db, type Executor, preparedPerDatabase } from '../db/client';
import { sessions, users } from '../db/schema/users';
import { transaction } from '../db/transaction';
import type { Actor } from './actor';
import {
  AccountInactiveError,
  AutomationTokenDisabledError,
  InvalidAccessTokenError,
  SessionNotFoundError,
  UnknownTokenError,
} from './errors';
import { idEquals } from '../ids';
import { hashToken, newOpaqueToken } from '../secrets';
import { markActive } from '../users/mark-active';
import { signAccessToken, verifyAccessToken } from './jwt';
import { recordSignInAddress } from './sign-in-addresses';
import type { Scope } from './scopes';

export const REFRESH_TOKEN_PREFIX = 'cebs_rt_';
export const AUTOMATION_TOKEN_PREFIX = 'cebs_at_';
export const LEGACY_TOKEN_PREFIX = 'cebs_lt_';

type UserRow = typeof users.$inferSelect;

/** Users who may hold a session: active, not deleted, not an extraction-only custodian account. */
export function canSignIn(user: Pick<UserRow, 'isActive' | 'deletedAt' | 'accountKind'>): boolean {
  return user.isActive && user.deletedAt === null && user.accountKind === 'standard';
}

/** Where a request came from: the client IP as API Gateway reports it (never a header) and its User-Agent. */
export interface ClientInfo {
  ip: string | null;
  userAgent?: string | null;
}

/** Longest User-Agent kept with a session; longer ones are cut. */
export const MAX_STORED_USER_AGENT = 512;

/** The creation columns of a session row (null: made outside a request, by a test or the CLI). */
export function creationColumns(client: ClientInfo | null) {
  const userAgent = client?.userAgent?.trim();
  return {
    createdIp: client?.ip ?? null,
    createdUserAgent: userAgent ? userAgent.slice(0, MAX_STORED_USER_AGENT) : null,
  };
}

/**
 * Starts a sign-in session: a refresh token (stored hashed, 30 days) and a short access token.
 * Records the client IP and User-Agent of the request (shown by GET /auth/sessions) and the
 * address as known to the account (lib/auth/sign-in-addresses.ts). Answers the
 * tokens and the new session's id, which the audit event of a sign-in names.
 */
export async function openLoginSession(executor: Executor, userId: string, client: ClientInfo | null) {
  const refreshToken = newOpaqueToken(REFRESH_TOKEN_PREFIX);
  const [session] = await executor
    .insert(sessions)
    .values({
      userId,
      kind: 'login',
      tokenHash: hashToken(refreshToken),
      expiresAt: addDays(now(), config().REFRESH_TOKEN_TTL_DAYS),
      ...creationColumns(client),
    })
    .returning({ id: sessions.id });
  await markActive(executor, userId);
  // The address is known to the account from now on: failures elsewhere never lock it out.
  await recordSignInAddress(executor, userId, client?.ip ?? null);
  const { token: accessToken } = await signAccessToken({ userId, sessionId: session!.id });
  return { sessionId: session!.id, tokens: { accessToken, refreshToken } };
}

type SessionKind = (typeof sessions.$inferSelect)['kind'];

/**
 * Ends the credentials of a user (or several users) of the given kinds (all by default), except `exceptSessionId`: sign-in
 * sessions and legacy tokens are deleted (their refresh and access tokens stop at once), automation
 * tokens are revoked (they stay listed as revoked). Used on password reset and change, login-email
 * change and account takeover. Returns how many were ended.
 */
export async function endSessionsOfUser(
  executor: Executor,
  userId: string | string[],
  options: { kinds?: SessionKind[]; exceptSessionId?: string } = {},
): Promise<number> {
  const userIds = typeof userId === 'string' ? [userId] : userId;
  if (userIds.length === 0) return 0;
  const ofUsers = inArray(sessions.userId, userIds);
  const kinds = options.kinds ?? ['login', 'legacy', 'automation'];
  const except = options.exceptSessionId ? [ne(sessions.id, options.exceptSessionId)] : [];
  const deletable = kinds.filter((kind) => kind !== 'automation');
  const [deleted, revoked] = await Promise.all([
    deletable.length
      ? executor
          .delete(sessions)
          .where(and(ofUsers, inArray(sessions.kind, deletable), ...except))
          .returning({ id: sessions.id })
      : Promise.resolve([]),
    kinds.includes('automation')
      ? executor
          .update(sessions)
          .set({ revokedAt: now() })
          .where(and(ofUsers, eq(sessions.kind, 'automation'), isNull(sessions.revokedAt), ...except))
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

/** The sign-in session lookup of every request with an access token, prepared. */
const accessTokenSession = preparedPerDatabase((database) =>
  database
    .select(actorColumns)
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(
      and(
        eq(sessions.id, sql.placeholder('sessionId')),
        eq(sessions.userId, sql.placeholder('userId')),
        eq(sessions.kind, 'login'),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, sql.placeholder('at')),
      ),
    )
    .limit(1)
    .prepare('access_token_session'),
);

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
    if (!claims) throw new InvalidAccessTokenError();
    // Placeholder values skip the column's encoder: the timestamp goes as the text drizzle would send.
    [row] = await accessTokenSession().execute({
      sessionId: claims.sessionId,
      userId: claims.userId,
      at: at.toISOString(),
    });
  }
  if (!row) throw new UnknownTokenError();
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
  if (!canSignIn(found)) throw new AccountInactiveError();
  if (found.kind === 'automation' && (found.scopes ?? []).length === 0) {
    throw new AutomationTokenDisabledError();
  }
  return {
    user: {
      id: found.userId,
      email: found.email,
      name: found.name,
      isSuperAdmin: found.isSuperAdmin,
      isEmailVerified: found.isEmailVerified,
    },
    session: {
      id: found.sessionId,
      kind: found.kind,
      scopes: found.kind === 'automation' ? (found.scopes as Scope[]) : null,
    },
  };
}

/** The session entry of GET /auth/sessions: never a token value or its hash. */
export function toSessionEntry(row: typeof sessions.$inferSelect, currentSessionId: string) {
  return {
    id: row.id,
    kind: row.kind === 'legacy' ? ('legacy' as const) : ('sign_in' as const),
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt.toISOString(),
    userAgent: row.createdUserAgent,
    ip: row.createdIp,
    current: row.id === currentSessionId,
  };
}

/**
 * The caller's live sign-in sessions and legacy tokens (not expired), newest first; `current`
 * marks the one of the bearer token. Automation tokens are listed by GET /auth/tokens.
 */
export async function listSessions({ actor }: { actor: Actor }) {
  const rows = await db()
    .select()
    .from(sessions)
    .where(
      and(
        eq(sessions.userId, actor.user.id),
        inArray(sessions.kind, ['login', 'legacy']),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, now()),
      ),
    )
    .orderBy(desc(sessions.createdAt), desc(sessions.id));
  return rows.map((row) => toSessionEntry(row, actor.session.id));
}

/**
 * Ends one of the caller's sign-in sessions or legacy tokens (the current one too, like logout):
 * its refresh and access tokens stop at once. Any id that is not one of them (another user's,
 * an automation token's, any string at all) is 404.
 */
export async function endSession(
  { actor }: { actor: Actor },
  { id: sessionId }: z.output<typeof SessionIdPath>,
): Promise<void> {
  await transaction(async (tx) => {
    const [row] = await tx
      .delete(sessions)
      .where(
        and(
          idEquals(sessions.id, sessionId),
          eq(sessions.userId, actor.user.id),
          inArray(sessions.kind, ['login', 'legacy']),
        ),
      )
      .returning({ id: sessions.id, kind: sessions.kind });
    if (!row) throw new SessionNotFoundError();
    await recordMemberAudit(tx, actor.user.id, {
      action: 'auth.session.ended',
      target: { type: 'session', id: row.id },
      metadata: { kind: row.kind, current: row.id === actor.session.id },
    });
  });
}
