import { randomBytes } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { now } from '../clock';
import type { Tx } from '../db/client';
import { organizationMembers } from '../db/schema/organizations';
import { sendWithCommit, transactionState } from '../db/transaction';
import { newId } from '../ids';
import type { AuditAction, AuditActorType } from './actions';
import { type ChainedEvent, canonicalTemplate, GENESIS_HASH } from './chain';
import { type AuditActor, currentAuditScope } from './scope';

/** One event as a domain function states it; the scope (request or command) adds who and from where. */
export interface AuditEventInput {
  action: AuditAction;
  organizationId: string;
  caseId?: string | null;
  target?: { type: string; id: string } | null;
  metadata?: Record<string, unknown>;
  /** Who acted, when not the scope's caller: sign-in (no caller yet), a reset link's user. */
  actor?: AuditActor;
}

type PendingEvent = Omit<ChainedEvent, 'sequence' | 'prevHash' | 'occurredAt' | 'actorType'> & {
  actorType: AuditActorType;
  /** Stored beside the chain: canonicalTemplate hashes only the ChainedEvent fields. */
  clientRequestId: string | null;
};

const PENDING = Symbol('audit events');

let writing = true;

/** The longest user agent recorded, in characters (code points); a longer one is cut, ending in `…`. */
export const USER_AGENT_MAX = 200;

/** `agent` bounded to USER_AGENT_MAX characters: a client's chosen text cannot grow every event it makes. */
export function boundedUserAgent(agent: string | null): string | null {
  if (agent === null) return null;
  const characters = [...agent];
  return characters.length <= USER_AGENT_MAX ? agent : `${characters.slice(0, USER_AGENT_MAX - 1).join('')}\u2026`;
}

/**
 * Benchmarks only (test/bench/without-audit.ts, preloaded into a bench server): the same routes
 * without their audit writes, to measure what the trail costs. Nothing in the service calls it.
 */
export function measureWithoutAuditTrail(): void {
  writing = false;
}

/** Whether events are written (always, but in the benchmark measuring the trail's cost). */
export const writingAuditTrail = (): boolean => writing;

/**
 * Records an event in the transaction `tx` (opened by `transaction()`): it is chained and written
 * just before the transaction commits, so the change and its event commit together or not at all.
 * Answers the event's id (null while the trail is not written: benchmarks only).
 */
export function recordAudit(tx: Tx, event: AuditEventInput): string | null {
  if (!writing) return null;
  const scope = currentAuditScope();
  const actor = event.actor ?? scope.actor;
  const pending = transactionState<PendingEvent[]>(tx, PENDING, () => [], appendAuditEvents);
  const id = newId();
  pending.push({
    id,
    organizationId: event.organizationId,
    action: event.action,
    actorType: actor.type,
    actorUserId: actor.userId,
    tokenId: actor.tokenId,
    caseId: event.caseId ?? null,
    targetType: event.target?.type ?? null,
    targetId: event.target?.id ?? null,
    ip: scope.ip,
    userAgent: boundedUserAgent(scope.userAgent),
    requestId: scope.requestId,
    clientRequestId: scope.clientRequestId ?? null,
    metadata: event.metadata ?? {},
  });
  return id;
}

/**
 * Records an event of a member (sign-in, sessions, tokens, profile) in every organization the user
 * belongs to, in one query whatever their number.
 */
export async function recordMemberAudit(
  tx: Tx,
  userId: string,
  event: Omit<AuditEventInput, 'organizationId' | 'caseId'>,
): Promise<void> {
  if (!writing) return;
  const memberships = await tx
    .select({ organizationId: organizationMembers.organizationId })
    .from(organizationMembers)
    .where(eq(organizationMembers.userId, userId));
  for (const { organizationId } of memberships) recordAudit(tx, { ...event, organizationId });
}

/**
 * Chains and writes `events` (the pending events of one transaction) in one round trip whatever
 * their number: `audit_append` (drizzle/0012_audit_trail.sql) takes them in organization order (so
 * two transactions lock heads in the same order and never wait on each other crosswise), moves each
 * organization's chain head under its row lock, puts the head's sequence + 1 and hash into the
 * event's canonical text (canonicalTemplate) and stores the event with the SHA-256 of that text.
 * An organization's first event creates its head. The lock is held from here to COMMIT, a moment,
 * since a transaction appends last. On postgres.js the call is sent with the COMMIT, not awaited
 * before it (sendWithCommit): no round trip of its own, and a failed append still rolls the
 * change back.
 */
async function appendAuditEvents(tx: Tx, events: PendingEvent[]): Promise<void> {
  if (events.length === 0) return;
  const occurredAt = now();
  const ordered = [...events].sort((a, b) =>
    a.organizationId < b.organizationId ? -1 : a.organizationId > b.organizationId ? 1 : 0,
  );
  const payload = ordered.map((event) => ({
    ...event,
    occurredAt: occurredAt.toISOString(),
    template: canonicalTemplate({ ...event, occurredAt }),
  }));
  const statement = `select audit_append(${dollarQuoted(JSON.stringify(payload))}::jsonb, '${GENESIS_HASH}')`;
  // On postgres.js the append rides with the COMMIT, one round trip for both (lib/db/transaction.ts).
  if (!sendWithCommit(tx, statement)) await tx.execute(sql.raw(statement));
}

/** Random per process, with a count: the quoting tags cannot be guessed by a client. */
const TAG_PREFIX = randomBytes(12).toString('hex');
let tagCount = 0;

/**
 * `text` as a dollar-quoted literal under a tag it does not contain (a random prefix per process
 * and a count: random bytes drawn for every event cost more than the rest of its serialization):
 * taken as is by PostgreSQL whatever it holds (nothing in it can end the literal). A literal rather
 * than a parameter because the driver describes every parameterized, unprepared statement first,
 * one more round trip on every write (measured in test/bench/README.md).
 */
function dollarQuoted(text: string): string {
  const tag = `$audit_${TAG_PREFIX}${(tagCount++).toString(36)}$`;
  if (text.includes(tag)) throw new Error('Audit payload contains its quoting tag');
  return `${tag}${text}${tag}`;
}
