import { createHash, randomBytes } from 'node:crypto';
import canonicalize from 'canonicalize';

/** `prev_hash` of an organization's first event: SHA-256 of the text `cebs-audit-genesis-v1`. */
export const GENESIS_HASH = createHash('sha256').update('cebs-audit-genesis-v1').digest('hex');

/** What an event's hash covers: every column but the hash itself. */
export interface ChainedEvent {
  id: string;
  organizationId: string;
  sequence: number;
  occurredAt: Date;
  action: string;
  actorType: string;
  actorUserId: string | null;
  tokenId: string | null;
  caseId: string | null;
  targetType: string | null;
  targetId: string | null;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
  metadata: Record<string, unknown>;
  prevHash: string;
}

/** The object whose RFC 8785 serialization is hashed: every column but `hash`, and `v` naming this layout. */
function hashedFields(event: Omit<ChainedEvent, 'sequence' | 'prevHash'>, sequence: unknown, prevHash: unknown) {
  return {
    v: 1,
    id: event.id,
    organizationId: event.organizationId,
    sequence,
    occurredAt: event.occurredAt.toISOString(),
    action: event.action,
    actorType: event.actorType,
    actorUserId: event.actorUserId,
    tokenId: event.tokenId,
    caseId: event.caseId,
    targetType: event.targetType,
    targetId: event.targetId,
    ip: event.ip,
    userAgent: event.userAgent,
    requestId: event.requestId,
    metadata: event.metadata,
    prevHash,
  };
}

function serialize(fields: unknown): string {
  const serialized = canonicalize(fields);
  if (serialized === undefined) throw new Error('Audit event cannot be serialized');
  return serialized;
}

/**
 * The bytes an event's hash is taken over: the JSON Canonicalization Scheme (RFC 8785: keys
 * sorted, no whitespace, fixed number and string forms) of an object of every column but `hash`,
 * with `v: 1` naming this layout and `occurredAt` in ISO 8601 with milliseconds. Anyone can
 * recompute it from an exported event with any RFC 8785 implementation.
 */
export function canonicalEvent(event: ChainedEvent): string {
  return serialize(hashedFields(event, event.sequence, event.prevHash));
}

/**
 * Where the database puts the event's sequence and previous hash into its canonical text, once it
 * holds the chain head (`audit_append` in drizzle/0012_audit_trail.sql spells the same markers as
 * chr(1) || 'S' || chr(1) and chr(1) || 'P' || chr(1)): U+0001 never appears raw in RFC 8785 output
 * (control characters are escaped), so these markers cannot collide with an event's content.
 */
const SEQUENCE_MARK = '\u0001S\u0001';
const PREV_HASH_MARK = '\u0001P\u0001';

/** Random per process: the stand-ins below exist only inside it, so no content can guess them. */
const NONCE_PREFIX = randomBytes(12).toString('hex');
let nonceCount = 0;

/**
 * A nonce for the stand-ins of one template: the process's random prefix and a count, unguessable
 * as a fresh random value would be (the stand-ins are replaced before the text leaves the process,
 * and checked to appear once), without drawing random bytes for every event.
 */
const standInNonce = () => `${NONCE_PREFIX}${(nonceCount++).toString(36)}`;

/**
 * The canonical text of an event before it is chained, with SEQUENCE_MARK where its sequence
 * (a number) goes and PREV_HASH_MARK inside the quotes of `prevHash`: replacing both gives exactly
 * `canonicalEvent` of the chained event.
 */
export function canonicalTemplate(event: Omit<ChainedEvent, 'sequence' | 'prevHash'>): string {
  const nonce = standInNonce();
  const sequence = `sequence-${nonce}`;
  const prevHash = `prev-hash-${nonce}`;
  const text = serialize(hashedFields(event, sequence, prevHash));
  const placed = text.replace(`"${sequence}"`, SEQUENCE_MARK).replace(`"${prevHash}"`, `"${PREV_HASH_MARK}"`);
  // Each stand-in appears once, where its field is (a nonce no content can guess).
  if (placed.split(SEQUENCE_MARK).length !== 2 || placed.split(PREV_HASH_MARK).length !== 2)
    throw new Error('Audit event template is ambiguous');
  return placed;
}

/** The event's `hash`: SHA-256 (hex) of its canonical serialization, which includes `prevHash`. */
export function eventHash(event: ChainedEvent): string {
  return createHash('sha256').update(canonicalEvent(event)).digest('hex');
}
