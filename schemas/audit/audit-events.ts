import * as z from 'zod/mini';
import { AUDIT_ACTOR_TYPES } from '../../lib/audit/actions';
import { DateTime, Id, IdText } from '../common/fields';
import { PageEntity, PagingQuery } from '../common/paging';

/** An action name or the start of one (`organization.member`): dotted lowercase words, as in lib/audit/actions.ts. */
const ActionPrefix = z
  .string()
  .check(z.maxLength(100), z.regex(/^[a-z0-9_.]+$/, 'Expected an action name or its start (a-z, 0-9, _ and .)'));

export const AuditEventsQuery = z.object({
  ...PagingQuery,
  action: z.optional(ActionPrefix),
  /** A user id; one that is not a UUID matches nothing, like every id a client sends. */
  actorId: z.optional(IdText),
  caseId: z.optional(IdText),
  // The domain refuses from after to (400 naming `query.from`, lib/audit/list.ts); stated here for clients.
  from: z.optional(DateTime).register(z.globalRegistry, {
    description: 'Events at or after this time (inclusive); not after `to` when both are sent (400 otherwise).',
    'x-not-after': 'to',
  }),
  to: z.optional(DateTime).register(z.globalRegistry, {
    description: 'Events at or before this time (inclusive); not before `from` when both are sent (400 otherwise).',
    'x-not-before': 'from',
  }),
});

export const AuditEventEntity = z
  .object({
    id: Id,
    sequence: z.int().check(z.minimum(1)),
    occurredAt: DateTime,
    action: z.string(),
    /** `userId` is null for staff, the system and anonymous callers; `tokenId` names the session or token used. */
    actor: z.object({ type: z.enum(AUDIT_ACTOR_TYPES), userId: z.nullable(Id), tokenId: z.nullable(Id) }),
    caseId: z.nullable(Id),
    /** Null with `ip`, `userAgent`, `clientRequestId` and `metadata` when `redacted`. */
    target: z.nullable(z.object({ type: z.string(), id: z.string() })),
    ip: z.nullable(z.string()),
    userAgent: z.nullable(z.string()),
    /** The service's own id of the request that recorded the event. */
    requestId: z.nullable(z.string()),
    /**
     * The X-Request-Id the client sent, when sane (8-128 of A-Za-z0-9._:-): kept beside the chain,
     * not covered by `hash`. Null when `redacted`.
     */
    clientRequestId: z.nullable(z.string()),
    /** Null when `redacted`. */
    metadata: z.nullable(z.record(z.string(), z.unknown())),
    /**
     * True for an event of a case the caller has no owner, admin or viewer access to: it happened
     * (action, time, actor, case id, chain hashes), but its target, IP, user agent, client request id
     * and metadata are withheld.
     */
    redacted: z.boolean(),
    /**
     * How many times the same read of case evidence (same user, action, case, path and query)
     * happened within an hour of this event, this one included; 1 for every other event. Counted
     * beside the chain, not covered by `hash`.
     */
    count: z.int().check(z.minimum(1)),
    prevHash: z.string(),
    hash: z.string(),
  })
  .register(z.globalRegistry, { id: 'AuditEventEntity' });

export const AuditEventPageEntity = PageEntity(AuditEventEntity).register(z.globalRegistry, {
  id: 'AuditEventPageEntity',
});

const Sequence = z.int().check(z.minimum(0));

export const AuditChainVerificationEntity = z
  .object({
    /**
     * Nothing wrong was found: the events since the checkpoint check out (and end at the head when
     * `complete`), the checkpoint's event is unchanged, and the last full re-verification did not fail.
     */
    valid: z.boolean(),
    /** Events this call read and checked: those appended since the checkpoint (all of them with no checkpoint). */
    checkedEvents: Sequence,
    headSequence: Sequence,
    headHash: z.string(),
    /** The first sequence known missing or wrong (by this call or by the last full re-verification); null when valid. */
    firstInvalidSequence: z.nullable(z.int().check(z.minimum(1))),
    /** The checkpoint this call started from: events 1 to `sequence` verified before (null: none, this call started at the first event). */
    checkpoint: z.nullable(
      z.object({
        sequence: Sequence,
        hash: z.string(),
        verifiedAt: DateTime,
        method: z.enum(['incremental', 'full']),
      }),
    ),
    /** Every event from the first through this sequence is verified, by the checkpoint and this call. */
    verifiedThroughSequence: Sequence,
    /** This call reached the head; false when more events were appended since the checkpoint than one call checks (the next call goes on). */
    complete: z.boolean(),
    /** The last finished full re-verification from the first event (a background job); null before the first. A failed one keeps every answer invalid. */
    lastFullVerification: z.nullable(
      z.object({
        startedAt: DateTime,
        finishedAt: DateTime,
        throughSequence: Sequence,
        valid: z.boolean(),
        firstInvalidSequence: z.nullable(z.int().check(z.minimum(1))),
      }),
    ),
    /** A full re-verification under way: when it started and the last event it checked so far. */
    runningFullVerification: z.nullable(z.object({ startedAt: DateTime, throughSequence: Sequence })),
  })
  .register(z.globalRegistry, { id: 'AuditChainVerificationEntity' });
