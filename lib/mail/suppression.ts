import { inArray, sql } from 'drizzle-orm';
import * as z from 'zod/mini';
import { now } from '../clock';
import { db } from '../db/client';
import { emailSuppressions } from '../db/schema/platform';
import { logger } from '../log';

/**
 * The suppression list: addresses SES reported as permanently bouncing or complaining, fed by the
 * configuration set's event destination (SNS -> infra/functions/mail-events.ts). The outbox never
 * sends to them again (lib/mail/outbox.ts). Transient and undetermined bounces are not recorded:
 * a full mailbox or a greylisting server is not a reason to stop mailing someone.
 */

export type SuppressionReason = 'bounce' | 'complaint';

/** The form an address is kept and compared in: the bare address, trimmed and lowercased. */
export function normalizeAddress(address: string): string {
  const bracketed = /<([^<>]+)>\s*$/.exec(address);
  return (bracketed?.[1] ?? address).trim().toLowerCase();
}

const Recipient = z.object({ emailAddress: z.string().check(z.minLength(3), z.includes('@')) });
const Timestamp = z.iso.datetime({ offset: true });
const FeedbackId = z.string().check(z.minLength(1));

/** The fields of an SES event (event publishing, `eventType`) the suppression list uses. */
const BounceEvent = z.object({
  eventType: z.literal('Bounce'),
  bounce: z.object({
    /** Permanent, Transient or Undetermined; only Permanent suppresses. */
    bounceType: z.string(),
    bounceSubType: z.optional(z.string()),
    bouncedRecipients: z
      .array(z.extend(Recipient, { diagnosticCode: z.optional(z.nullable(z.string())) }))
      .check(z.minLength(1)),
    timestamp: Timestamp,
    feedbackId: FeedbackId,
  }),
});

const ComplaintEvent = z.object({
  eventType: z.literal('Complaint'),
  complaint: z.object({
    complainedRecipients: z.array(Recipient).check(z.minLength(1)),
    complaintFeedbackType: z.optional(z.nullable(z.string())),
    timestamp: Timestamp,
    feedbackId: FeedbackId,
  }),
});

/** Any other well-formed event (Send, Delivery, ...): not ours to act on. */
const OtherEvent = z.object({ eventType: z.string().check(z.minLength(1)) });

export type SesEventOutcome =
  | { outcome: 'suppressed'; reason: SuppressionReason; addresses: string[]; feedbackId: string }
  | { outcome: 'ignored'; why: 'malformed' | 'transient-bounce' | 'other-event' };

/**
 * Handles one SES event as SNS delivers it (the message text, JSON). A permanent bounce or a
 * complaint puts each recipient on the suppression list; redelivering the same event changes
 * nothing. A malformed event is logged and ignored rather than thrown, so it cannot cause retries.
 */
export async function handleSesEvent(message: string): Promise<SesEventOutcome> {
  let raw: unknown;
  try {
    raw = JSON.parse(message);
  } catch {
    raw = undefined;
  }
  // Identity notifications (not used by the stack, but the same shapes) name the kind notificationType.
  if (raw && typeof raw === 'object' && !('eventType' in raw) && 'notificationType' in raw)
    raw = { ...raw, eventType: (raw as { notificationType: unknown }).notificationType };

  const bounce = BounceEvent.safeParse(raw);
  if (bounce.success) {
    const { bounceType, bounceSubType, bouncedRecipients, timestamp, feedbackId } = bounce.data.bounce;
    if (bounceType !== 'Permanent') {
      logger.info('ses bounce not suppressed', { bounceType, bounceSubType, feedbackId });
      return { outcome: 'ignored', why: 'transient-bounce' };
    }
    const addresses = await suppress(
      bouncedRecipients.map((recipient) => ({
        address: recipient.emailAddress,
        detail: [`Permanent/${bounceSubType ?? 'General'}`, recipient.diagnosticCode].filter(Boolean).join(': '),
      })),
      { reason: 'bounce', at: new Date(timestamp), feedbackId },
    );
    return { outcome: 'suppressed', reason: 'bounce', addresses, feedbackId };
  }

  const complaint = ComplaintEvent.safeParse(raw);
  if (complaint.success) {
    const { complainedRecipients, complaintFeedbackType, timestamp, feedbackId } = complaint.data.complaint;
    const addresses = await suppress(
      complainedRecipients.map((recipient) => ({
        address: recipient.emailAddress,
        detail: complaintFeedbackType ? `complaint: ${complaintFeedbackType}` : 'complaint',
      })),
      { reason: 'complaint', at: new Date(timestamp), feedbackId },
    );
    return { outcome: 'suppressed', reason: 'complaint', addresses, feedbackId };
  }

  const other = OtherEvent.safeParse(raw);
  if (other.success && other.data.eventType !== 'Bounce' && other.data.eventType !== 'Complaint') {
    logger.info('ses event ignored', { eventType: other.data.eventType });
    return { outcome: 'ignored', why: 'other-event' };
  }
  // No addresses or message text in the log: only what tells an operator which part was wrong.
  const issues = (bounce.error ?? complaint.error)?.issues.map((issue) => issue.path.join('.')) ?? [];
  logger.warn('malformed ses event ignored', { issues: issues.slice(0, 10) });
  return { outcome: 'ignored', why: 'malformed' };
}

/**
 * Puts addresses on the suppression list (one upsert). An address already there keeps its first
 * event time and takes the reason, feedback id and detail of whichever event is the latest; the
 * same event delivered twice leaves the row untouched. Returns the normalized addresses.
 */
export async function suppress(
  recipients: Array<{ address: string; detail?: string }>,
  event: { reason: SuppressionReason; at: Date; feedbackId: string },
): Promise<string[]> {
  const byAddress = new Map<string, string | undefined>();
  for (const recipient of recipients) byAddress.set(normalizeAddress(recipient.address), recipient.detail);
  if (byAddress.size === 0) return [];
  const at = now();
  const newer = sql`excluded.last_event_at > "email_suppressions"."last_event_at"`;
  const latest = (column: string) =>
    sql.raw(
      `case when excluded.last_event_at > "email_suppressions"."last_event_at" then excluded.${column} else "email_suppressions"."${column}" end`,
    );
  await db()
    .insert(emailSuppressions)
    .values(
      [...byAddress].map(([address, detail]) => ({
        address,
        reason: event.reason,
        firstEventAt: event.at,
        lastEventAt: event.at,
        feedbackId: event.feedbackId,
        detail: detail?.slice(0, 500) ?? null,
        createdAt: at,
        updatedAt: at,
      })),
    )
    .onConflictDoUpdate({
      target: emailSuppressions.address,
      set: {
        reason: latest('reason'),
        feedbackId: latest('feedback_id'),
        detail: latest('detail'),
        firstEventAt: sql`least("email_suppressions"."first_event_at", excluded.first_event_at)`,
        lastEventAt: sql`greatest("email_suppressions"."last_event_at", excluded.last_event_at)`,
        updatedAt: at,
      },
      // Only an event newer or older than what is recorded changes the row: a redelivery does not.
      setWhere: sql`${newer} or excluded.first_event_at < "email_suppressions"."first_event_at"`,
    });
  logger.info('addresses suppressed', { reason: event.reason, count: byAddress.size, feedbackId: event.feedbackId });
  return [...byAddress.keys()];
}

/** The suppressed ones among these addresses (normalized) with their reason. */
export async function suppressedAddresses(addresses: readonly string[]): Promise<Map<string, SuppressionReason>> {
  const normalized = [...new Set(addresses.map(normalizeAddress))];
  if (normalized.length === 0) return new Map();
  const rows = await db()
    .select({ address: emailSuppressions.address, reason: emailSuppressions.reason })
    .from(emailSuppressions)
    .where(inArray(emailSuppressions.address, normalized));
  return new Map(rows.map((row) => [row.address, row.reason]));
}
