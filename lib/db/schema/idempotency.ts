import { index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { timestamptz } from '../columns';

/**
 * The first answer to a write sent with an `Idempotency-Key` (lib/idempotency), kept 24 hours per
 * caller (`scope`) and route. The raw key is never stored: rows are found by `key_hash`, and the
 * stored answer (headers and body, which can hold tokens) is encrypted under a key derived from the
 * service secret and the raw idempotency key.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    /** `user:<id>` for a signed-in caller, `anonymous` otherwise. */
    scope: text('scope').notNull(),
    /** The route's operation id. */
    route: text('route').notNull(),
    /** SHA-256 of scope, route and the raw key. */
    keyHash: text('key_hash').notNull(),
    /** SHA-256 of the request (method, route, validated path, query, body, organization header). */
    fingerprint: text('fingerprint').notNull(),
    /** running (claimed, the handler is working) -> done (answer stored). */
    status: text('status', { enum: ['running', 'done'] }).notNull(),
    /** While running: after this the claim has lapsed (the function timed out) and may be taken again. */
    lockedUntil: timestamptz('locked_until').notNull(),
    responseStatus: integer('response_status'),
    /** AES-256-GCM of the answer's headers and body (base64: iv, tag, ciphertext). */
    responseSealed: text('response_sealed'),
    createdAt: timestamptz('created_at').notNull(),
    expiresAt: timestamptz('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.scope, t.route, t.keyHash] }),
    index('idempotency_keys_expires_idx').on(t.expiresAt),
  ],
);
