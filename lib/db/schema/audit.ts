import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { AUDIT_ACTOR_TYPES } from '../../audit/actions';
import { id, timestamptz } from '../columns';

/**
 * The organization's audit trail (lib/audit): append-only (a trigger refuses UPDATE, DELETE and
 * TRUNCATE; in the cloud the application role has only INSERT and SELECT), one hash chain per
 * organization. No foreign keys: the trail outlives the cases, users and sessions it names.
 */
export const auditEvents = pgTable(
  'audit_events',
  {
    ...id,
    organizationId: uuid('organization_id').notNull(),
    /** 1, 2, 3… per organization with no gaps, assigned under the chain head's row lock. */
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    occurredAt: timestamptz('occurred_at').notNull(),
    /** Dotted, stable name (lib/audit/actions.ts). */
    action: text('action').notNull(),
    actorType: text('actor_type', { enum: AUDIT_ACTOR_TYPES }).notNull(),
    actorUserId: uuid('actor_user_id'),
    /** The session (sign-in, automation or legacy token) the actor called with. */
    tokenId: uuid('token_id'),
    caseId: uuid('case_id'),
    targetType: text('target_type'),
    targetId: text('target_id'),
    ip: text('ip'),
    userAgent: text('user_agent'),
    /** The service's own id of the request (never one a client chose). */
    requestId: text('request_id'),
    /**
     * The client's X-Request-Id when it sent a sane one (8-128 of `A-Za-z0-9._:-`): kept beside the
     * chain, not in the hash (the client's claim, not evidence the chain vouches for).
     */
    clientRequestId: text('client_request_id'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [
    uniqueIndex('audit_events_organization_sequence_key').on(t.organizationId, t.sequence),
    index('audit_events_case_idx').on(t.organizationId, t.caseId, t.sequence).where(sql`${t.caseId} is not null`),
    index('audit_events_actor_idx')
      .on(t.organizationId, t.actorUserId, t.sequence)
      .where(sql`${t.actorUserId} is not null`),
  ],
);

/**
 * The head of each organization's chain: its row is the per-organization lock under which the
 * next sequence and hash are assigned (INSERT … ON CONFLICT DO UPDATE locks it), so concurrent
 * requests never fork the chain. Verification also compares it with the last event, so a
 * removed tail shows.
 */
export const auditChainHeads = pgTable('audit_chain_heads', {
  organizationId: uuid('organization_id').primaryKey(),
  sequence: bigint('sequence', { mode: 'number' }).notNull(),
  hash: text('hash').notNull(),
  /** The hash before the last event: the append sets it from the old `hash`, so one UPDATE … RETURNING gives both. */
  prevHash: text('prev_hash'),
});

/**
 * How far each organization's chain is known to be intact, written only by lib/audit
 * (verify.ts, full-verification.ts): the checkpoint (every event from the first through `sequence`
 * verified, the last one hashing to `hash`), from which GET .../audit-events/verify checks only
 * what was appended since; and the background full re-verification (maintenance), its progress
 * and its last result. A trigger (drizzle/0024) refuses a checkpoint moving back, a failed full
 * verification being overwritten and any DELETE: what an auditor was told stays told.
 */
export const auditVerificationCheckpoints = pgTable(
  'audit_verification_checkpoints',
  {
    organizationId: uuid('organization_id').primaryKey(),
    /** Events 1..sequence are verified; 0 with GENESIS_HASH before any. */
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    /** The hash of the event at `sequence`: the next call checks that event still has it. */
    hash: text('hash').notNull(),
    verifiedAt: timestamptz('verified_at').notNull(),
    /** How the checkpoint was last moved: by a verify call, or by a finished full verification. */
    method: text('method', { enum: ['incremental', 'full'] }).notNull(),
    /** The running full verification: when it started and the last event it checked (null: none running). */
    fullStartedAt: timestamptz('full_started_at'),
    fullCursorSequence: bigint('full_cursor_sequence', { mode: 'number' }),
    fullCursorHash: text('full_cursor_hash'),
    /** The last finished full verification. */
    lastFullStartedAt: timestamptz('last_full_started_at'),
    lastFullFinishedAt: timestamptz('last_full_finished_at'),
    /** The head it reached (valid) or the last event it read (invalid). */
    lastFullThroughSequence: bigint('last_full_through_sequence', { mode: 'number' }),
    lastFullValid: boolean('last_full_valid'),
    lastFullFirstInvalidSequence: bigint('last_full_first_invalid_sequence', { mode: 'number' }),
  },
  (t) => [
    check('audit_verification_checkpoints_sequence_check', sql`${t.sequence} >= 0`),
    check('audit_verification_checkpoints_method_check', sql`${t.method} in ('incremental', 'full')`),
  ],
);

/**
 * Repeated reads of case evidence (lib/audit/read-events.ts): the same read (action, case, user,
 * stored path and query) within READ_WINDOW_SECONDS of a chained read event is counted on that
 * event's row here instead of being chained again. Beside the chain and mutable: the chain proves
 * the first read of each window; the count and the last read are the service's tally.
 */
export const auditReadCounts = pgTable(
  'audit_read_counts',
  {
    /** The chained read event the repeats are counted on. */
    eventId: uuid('event_id').primaryKey(),
    organizationId: uuid('organization_id').notNull(),
    /** SHA-256 of what makes two reads the same (readKey in lib/audit/read-events.ts). */
    readKey: text('read_key').notNull(),
    firstReadAt: timestamptz('first_read_at').notNull(),
    lastReadAt: timestamptz('last_read_at').notNull(),
    /** Reads counted, the chained one included. */
    count: integer('count').notNull(),
  },
  (t) => [index('audit_read_counts_key_idx').on(t.readKey, t.firstReadAt)],
);

/**
 * Evidence objects in storage (email and device-note attachments): the SHA-256 and size of their
 * bytes at import, which downloads check again before serving them.
 */
export const evidenceObjects = pgTable(
  'evidence_objects',
  {
    /** The object key in storage (cases/{caseId}/...). */
    key: text('key').primaryKey(),
    caseId: uuid('case_id').notNull(),
    sha256: text('sha256').notNull(),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    recordedAt: timestamptz('recorded_at').notNull(),
  },
  (t) => [index('evidence_objects_case_idx').on(t.caseId)],
);
