import { createHash } from 'node:crypto';
import { and, eq, lt, or } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db } from '../db/client';
import { idempotencyKeys } from '../db/schema/idempotency';
import { openAnswer, sealAnswer } from './crypto';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './errors';

export { canonicalHash } from './crypto';
export { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './errors';

/** How long the first answer to a key is kept (Stripe's 24 hours). */
export const IDEMPOTENCY_TTL_SECONDS = 86_400;

/** Who sent the key, on which route, and the key itself (kept in memory only). */
export interface IdempotencyClaim {
  scope: string;
  route: string;
  rawKey: string;
  keyHash: string;
  /** When this request claimed the key: marks the claim, so a lapsed one never overwrites a newer one. */
  claimedAt: Date;
}

/** An answer as stored and replayed: status, the headers that matter, the body. */
export interface StoredAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export type ClaimOutcome = { kind: 'claimed'; claim: IdempotencyClaim } | { kind: 'replay'; answer: StoredAnswer };

/** The lookup key: the raw key never reaches the database. */
export function idempotencyKeyHash(scope: string, route: string, rawKey: string): string {
  return createHash('sha256').update(`${scope}\0${route}\0${rawKey}`).digest('hex');
}

/**
 * Takes the key for this request in one statement: a new key, one whose answer expired, or one whose
 * earlier claim lapsed (that request ran out of time) with the same request is claimed; otherwise the
 * row decides: another request -> 409 REUSED, still running -> 409 IN_USE, answered -> replay.
 */
export async function claimIdempotencyKey(input: {
  scope: string;
  route: string;
  rawKey: string;
  fingerprint: string;
  lockSeconds: number;
}): Promise<ClaimOutcome> {
  const at = now();
  const keyHash = idempotencyKeyHash(input.scope, input.route, input.rawKey);
  const fresh = {
    fingerprint: input.fingerprint,
    status: 'running' as const,
    lockedUntil: addSeconds(at, input.lockSeconds),
    responseStatus: null,
    responseSealed: null,
    createdAt: at,
    expiresAt: addSeconds(at, IDEMPOTENCY_TTL_SECONDS),
  };
  const claimed = await db()
    .insert(idempotencyKeys)
    .values({ scope: input.scope, route: input.route, keyHash, ...fresh })
    .onConflictDoUpdate({
      target: [idempotencyKeys.scope, idempotencyKeys.route, idempotencyKeys.keyHash],
      set: fresh,
      where: or(
        lt(idempotencyKeys.expiresAt, at),
        and(
          eq(idempotencyKeys.status, 'running'),
          lt(idempotencyKeys.lockedUntil, at),
          eq(idempotencyKeys.fingerprint, input.fingerprint),
        ),
      ),
    })
    .returning({ createdAt: idempotencyKeys.createdAt });
  if (claimed.length > 0)
    return {
      kind: 'claimed',
      claim: { scope: input.scope, route: input.route, rawKey: input.rawKey, keyHash, claimedAt: at },
    };

  const [row] = await db()
    .select()
    .from(idempotencyKeys)
    .where(rowOf(input.scope, input.route, keyHash));
  // Gone between the two statements (pruned, or its request failed and gave it back): in use is the honest answer.
  if (!row) throw new IdempotencyKeyInUseError();
  if (row.fingerprint !== input.fingerprint) throw new IdempotencyKeyReusedError();
  if (row.status === 'running' || row.responseStatus === null || row.responseSealed === null)
    throw new IdempotencyKeyInUseError();
  const stored = JSON.parse(await openAnswer(row.responseSealed, input.rawKey, input.scope, input.route)) as {
    headers: Record<string, string>;
    body: string;
  };
  return { kind: 'replay', answer: { statusCode: row.responseStatus, ...stored } };
}

function rowOf(scope: string, route: string, keyHash: string) {
  return and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.route, route), eq(idempotencyKeys.keyHash, keyHash));
}

function ownClaim(claim: IdempotencyClaim) {
  return and(
    rowOf(claim.scope, claim.route, claim.keyHash),
    eq(idempotencyKeys.status, 'running'),
    eq(idempotencyKeys.createdAt, claim.claimedAt),
  );
}

/** Stores the answer of a claimed key, sealed; replays of the key answer it until the row expires. */
export async function recordIdempotentAnswer(claim: IdempotencyClaim, answer: StoredAnswer): Promise<void> {
  const sealed = await sealAnswer(
    JSON.stringify({ headers: answer.headers, body: answer.body }),
    claim.rawKey,
    claim.scope,
    claim.route,
  );
  await db()
    .update(idempotencyKeys)
    .set({ status: 'done', responseStatus: answer.statusCode, responseSealed: sealed })
    .where(ownClaim(claim));
}

/** Gives a claimed key back (the request failed in a way worth retrying): the next request runs. */
export async function releaseIdempotencyKey(claim: IdempotencyClaim): Promise<void> {
  await db().delete(idempotencyKeys).where(ownClaim(claim));
}

/** Maintenance: drops answers past their 24 hours. */
export async function pruneIdempotencyKeys(): Promise<number> {
  const deleted = await db()
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.expiresAt, now()))
    .returning({ keyHash: idempotencyKeys.keyHash });
  return deleted.length;
}
