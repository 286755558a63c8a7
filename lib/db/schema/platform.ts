import { sql } from 'drizzle-orm';
import { check, index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { id, timestamps, timestamptz } from '../columns';
import { organizations } from './organizations';

/**
 * Transactional outbox: an email is written in the same transaction as the change that causes
 * it, then delivered; a failed delivery stays here and is retried with backoff.
 */
export const emailOutbox = pgTable(
  'email_outbox',
  {
    ...id,
    toAddress: text('to_address').notNull(),
    subject: text('subject').notNull(),
    textBody: text('text_body').notNull(),
    htmlBody: text('html_body').notNull(),
    /**
     * pending -> sending (leased until next_attempt_at) -> sent, or failed after the last attempt,
     * or suppressed: never sent because the address is in email_suppressions (the row stays).
     */
    status: text('status', { enum: ['pending', 'sending', 'sent', 'failed', 'suppressed'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    nextAttemptAt: timestamptz('next_attempt_at').notNull(),
    sentAt: timestamptz('sent_at'),
    ...timestamps,
  },
  (t) => [index('email_outbox_due_idx').on(t.status, t.nextAttemptAt)],
);

/**
 * Addresses the service no longer mails: SES reported a permanent bounce or a complaint for them
 * (lib/mail/suppression.ts). The outbox marks messages to them `suppressed` instead of sending.
 * Delete a row to lift the suppression.
 */
export const emailSuppressions = pgTable(
  'email_suppressions',
  {
    /** Lowercased (a check constraint holds every writer to that). */
    address: text('address').primaryKey(),
    /** The latest event's kind: `bounce` (permanent) or `complaint`. */
    reason: text('reason', { enum: ['bounce', 'complaint'] }).notNull(),
    firstEventAt: timestamptz('first_event_at').notNull(),
    lastEventAt: timestamptz('last_event_at').notNull(),
    /** SES feedback id of the latest event (support cases with AWS quote it). */
    feedbackId: text('feedback_id').notNull(),
    /** What SES said: bounce subtype and diagnostic code, or the complaint feedback type. */
    detail: text('detail'),
    ...timestamps,
  },
  (t) => [
    check('email_suppressions_address_lowercase', sql`${t.address} = lower(${t.address})`),
    check('email_suppressions_reason', sql`${t.reason} in ('bounce', 'complaint')`),
  ],
);

/** Fixed one-minute windows per key (client IP or user); one upsert per request. */
export const rateLimitCounters = pgTable(
  'rate_limit_counters',
  {
    key: text('key').notNull(),
    windowStart: timestamptz('window_start').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.key, t.windowStart] })],
);

/** Codes handed to custodians for the desktop extractor; their emails count as taken. */
export const extractionCodes = pgTable(
  'extraction_codes',
  {
    ...id,
    organizationId: uuid('organization_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    /** Stored lowercased, like users.email (a check constraint holds whoever writes it to that). */
    custodianEmail: text('custodian_email').notNull(),
    custodianName: text('custodian_name'),
    /** The case the code collects evidence for, when it was issued for one. */
    caseId: uuid('case_id'),
    deviceId: text('device_id'),
    usedAt: timestamptz('used_at'),
    ...timestamps,
  },
  (t) => [
    index('extraction_codes_custodian_email_idx').on(t.custodianEmail),
    index('extraction_codes_organization_idx').on(t.organizationId),
    // check-email-availability compares the lowercased address with this column as it is.
    check('extraction_codes_custodian_email_lowercase', sql`${t.custodianEmail} = lower(${t.custodianEmail})`),
  ],
);
