import { and, desc, eq, isNull } from 'drizzle-orm';
import type * as z from 'zod/mini';
import type { GenerateTokenBody, TokenIdPath, UpdateTokenScopesDto } from '../../schemas/auth/tokens';
import { recordMemberAudit } from '../audit/record';
import { addDays, addMonths, now } from '../clock';
import { config } from '../config';
import { db } from '../db/client';
import { sessions } from '../db/schema/users';
import { transaction } from '../db/transaction';
import { idEquals } from '../ids';
import { hashToken, newOpaqueToken } from '../secrets';
import type { Actor } from './actor';
import {
  AutomationTokenNotFoundError,
  AutomationTokensOffError,
  NoScopesError,
  TokenRevokedError,
  UnscopedTokenOptionsError,
} from './errors';
import type { Scope } from './scopes';
import { AUTOMATION_TOKEN_PREFIX, type ClientInfo, creationColumns, LEGACY_TOKEN_PREFIX } from './sessions';

export const MAX_TTL_DAYS = 400;
export const LEGACY_TOKEN_YEARS = 5;

type SessionRow = typeof sessions.$inferSelect;

function assertAutomationTokensEnabled(): void {
  if (!config().FEATURE_AUTOMATION_TOKENS) throw new AutomationTokensOffError();
}

/** The automation token entry: never the token value. */
export function toTokenEntry(row: SessionRow) {
  return {
    id: row.id,
    label: row.label,
    scopes: (row.scopes ?? []) as Scope[],
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt.toISOString(),
    revoked: row.revokedAt !== null,
    createdAt: row.createdAt.toISOString(),
  };
}

/**
 * With scopes: a scoped automation token (ttlDays, else the configured default, capped at 400
 * days). Without: a legacy full-access token valid 5 years. The value is returned only here. The
 * client IP and User-Agent of the request are kept with it (GET /auth/sessions shows legacy tokens).
 */
export async function generateToken(
  { actor, client = null }: { actor: Actor; client?: ClientInfo | null },
  input: z.output<typeof GenerateTokenBody>,
) {
  if (input.scopes === undefined) {
    if (input.label !== undefined || input.ttlDays !== undefined) {
      throw new UnscopedTokenOptionsError();
    }
    const token = newOpaqueToken(LEGACY_TOKEN_PREFIX);
    const validTill = addMonths(now(), 12 * LEGACY_TOKEN_YEARS);
    await transaction(async (tx) => {
      const [row] = await tx
        .insert(sessions)
        .values({
          userId: actor.user.id,
          kind: 'legacy',
          tokenHash: hashToken(token),
          expiresAt: validTill,
          ...creationColumns(client),
        })
        .returning({ id: sessions.id });
      await recordMemberAudit(tx, actor.user.id, {
        action: 'auth.token.created',
        target: { type: 'token', id: row!.id },
        metadata: { kind: 'legacy', expiresAt: validTill.toISOString() },
      });
    });
    return { token, validTill: validTill.toISOString() };
  }
  assertAutomationTokensEnabled();
  const scopes = [...new Set(input.scopes)];
  if (scopes.length === 0) throw new NoScopesError();
  const ttlDays = Math.min(input.ttlDays ?? config().AUTOMATION_TOKEN_DEFAULT_TTL_DAYS, MAX_TTL_DAYS);
  const token = newOpaqueToken(AUTOMATION_TOKEN_PREFIX);
  const row = await transaction(async (tx) => {
    const [row] = await tx
      .insert(sessions)
      .values({
        userId: actor.user.id,
        kind: 'automation',
        tokenHash: hashToken(token),
        label: input.label ?? null,
        scopes,
        expiresAt: addDays(now(), ttlDays),
        ...creationColumns(client),
      })
      .returning();
    await recordMemberAudit(tx, actor.user.id, {
      action: 'auth.token.created',
      target: { type: 'token', id: row!.id },
      metadata: { kind: 'automation', label: row!.label, scopes, expiresAt: row!.expiresAt.toISOString() },
    });
    return row;
  });
  return { token, id: row!.id, label: row!.label, scopes, expiresAt: row!.expiresAt.toISOString() };
}

/** The caller's automation tokens, newest first (legacy tokens are not listed). */
export async function listTokens({ actor }: { actor: Actor }) {
  const rows = await db()
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, actor.user.id), eq(sessions.kind, 'automation')))
    .orderBy(desc(sessions.createdAt), desc(sessions.id));
  return rows.map(toTokenEntry);
}

/** Marks the token revoked (works while the feature is off). Revoking twice keeps the first time. */
export async function revokeToken(
  { actor }: { actor: Actor },
  { id: tokenId }: z.output<typeof TokenIdPath>,
): Promise<void> {
  const ofCaller = and(
    idEquals(sessions.id, tokenId),
    eq(sessions.userId, actor.user.id),
    eq(sessions.kind, 'automation'),
  );
  await transaction(async (tx) => {
    const [revoked] = await tx
      .update(sessions)
      .set({ revokedAt: now() })
      .where(and(ofCaller, isNull(sessions.revokedAt)))
      .returning({ id: sessions.id, label: sessions.label, scopes: sessions.scopes });
    if (revoked) {
      await recordMemberAudit(tx, actor.user.id, {
        action: 'auth.token.revoked',
        target: { type: 'token', id: revoked.id },
        metadata: { kind: 'automation', label: revoked.label, scopes: revoked.scopes ?? [] },
      });
      return;
    }
    // Revoked before (the first time stays, nothing changed, nothing recorded), or not the caller's: 404.
    const [existing] = await tx.select({ id: sessions.id }).from(sessions).where(ofCaller).limit(1);
    if (!existing) throw new AutomationTokenNotFoundError();
  });
}

/** Replaces the scopes (duplicates removed); an empty list disables the token without deleting it. */
export async function updateTokenScopes(
  { actor }: { actor: Actor },
  { id: tokenId, scopes }: z.output<typeof TokenIdPath> & z.output<typeof UpdateTokenScopesDto>,
) {
  assertAutomationTokensEnabled();
  const newScopes = [...new Set(scopes)];
  const updated = await transaction(async (tx) => {
    // Locked: a concurrent revocation or change waits, so the event's previous scopes are the replaced ones.
    const [row] = await tx
      .select()
      .from(sessions)
      .where(and(idEquals(sessions.id, tokenId), eq(sessions.userId, actor.user.id), eq(sessions.kind, 'automation')))
      .limit(1)
      .for('update');
    if (!row) throw new AutomationTokenNotFoundError();
    if (row.revokedAt) throw new TokenRevokedError();
    const [updated] = await tx.update(sessions).set({ scopes: newScopes }).where(eq(sessions.id, row.id)).returning();
    await recordMemberAudit(tx, actor.user.id, {
      action: 'auth.token.scopes_changed',
      target: { type: 'token', id: row.id },
      metadata: { label: row.label, previousScopes: row.scopes ?? [], scopes: newScopes },
    });
    return updated!;
  });
  return toTokenEntry(updated);
}
