import { and, eq, inArray, lte, or, sql } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db, type Executor } from '../db/client';
import { emailOutbox } from '../db/schema/platform';
import type { AfterCommit } from '../db/transaction';
import { logger } from '../log';
import * as businessMetrics from '../observability/metrics';
import { normalizeAddress, suppressedAddresses } from './suppression';
import { type MailMessage, mailTransport } from './transport';

export const MAX_ATTEMPTS = 8;
/** How long a claimed message is leased before another worker may retry it. */
const LEASE_SECONDS = 60;

/**
 * Writes the message into the outbox inside the caller's transaction and asks for delivery once
 * that transaction commits. If the process dies or the send fails, the row stays due and
 * `deliverDueEmails` sends it later: mail is never lost with a committed change.
 */
export async function queueEmails(tx: Executor, afterCommit: AfterCommit, messages: MailMessage[]): Promise<string[]> {
  if (messages.length === 0) return [];
  const rows = await tx
    .insert(emailOutbox)
    .values(
      messages.map((m) => ({
        toAddress: m.to,
        subject: m.subject,
        textBody: m.text,
        htmlBody: m.html,
        nextAttemptAt: now(),
      })),
    )
    .returning({ id: emailOutbox.id });
  const ids = rows.map((row) => row.id);
  afterCommit(() => deliverEmails(ids));
  return ids;
}

export const queueEmail = (tx: Executor, afterCommit: AfterCommit, message: MailMessage): Promise<string[]> =>
  queueEmails(tx, afterCommit, [message]);

/** Sends every message that is due (new, failed earlier, or whose lease ran out). */
export async function deliverDueEmails(limit = 50): Promise<number> {
  const due = await db()
    .select({ id: emailOutbox.id })
    .from(emailOutbox)
    .where(and(inArray(emailOutbox.status, ['pending', 'sending']), lte(emailOutbox.nextAttemptAt, now())))
    .orderBy(emailOutbox.nextAttemptAt)
    .limit(limit);
  if (due.length === 0) return 0;
  return deliverEmails(due.map((row) => row.id));
}

/**
 * Claims the given messages (lease), sends them, and records each outcome. Returns how many were
 * sent. A message to a suppressed address (lib/mail/suppression.ts) is not sent: it is marked
 * `suppressed` and kept, and never retried.
 */
export async function deliverEmails(ids: string[]): Promise<number> {
  const claimed = await db()
    .update(emailOutbox)
    .set({
      status: 'sending',
      attempts: sql`${emailOutbox.attempts} + 1`,
      nextAttemptAt: addSeconds(now(), LEASE_SECONDS),
    })
    .where(
      and(
        inArray(emailOutbox.id, ids),
        or(eq(emailOutbox.status, 'pending'), eq(emailOutbox.status, 'sending')),
        lte(emailOutbox.nextAttemptAt, now()),
      ),
    )
    .returning();
  const suppressed = await suppressedAddresses(claimed.map((message) => message.toAddress));
  const sentIds: string[] = [];
  const suppressedIds = new Map<string, string[]>();
  for (const message of claimed) {
    const reason = suppressed.get(normalizeAddress(message.toAddress));
    if (reason) {
      suppressedIds.set(reason, [...(suppressedIds.get(reason) ?? []), message.id]);
      logger.info('email to a suppressed address not sent', { outboxId: message.id, reason });
      continue;
    }
    try {
      await mailTransport().send({
        to: message.toAddress,
        subject: message.subject,
        text: message.textBody,
        html: message.htmlBody,
      });
      sentIds.push(message.id);
    } catch (error) {
      const finalAttempt = message.attempts >= MAX_ATTEMPTS;
      // Exponential backoff: 30 s, 1 min, 2 min, ... capped at one hour.
      const backoffSeconds = Math.min(30 * 2 ** (message.attempts - 1), 3600);
      await db()
        .update(emailOutbox)
        .set({
          status: finalAttempt ? 'failed' : 'pending',
          lastError: error instanceof Error ? error.message.slice(0, 500) : 'send failed',
          nextAttemptAt: addSeconds(now(), backoffSeconds),
        })
        .where(eq(emailOutbox.id, message.id));
      logger.warn('email delivery failed', { outboxId: message.id, attempt: message.attempts, finalAttempt });
      businessMetrics.mailFailed(finalAttempt);
    }
  }
  // One statement per suppression reason (bounce, complaint), whatever the batch size.
  for (const [reason, messageIds] of suppressedIds)
    await db()
      .update(emailOutbox)
      .set({ status: 'suppressed', lastError: `address suppressed (${reason})` })
      .where(inArray(emailOutbox.id, messageIds));
  if (sentIds.length > 0) {
    await db()
      .update(emailOutbox)
      .set({ status: 'sent', sentAt: now(), lastError: null })
      .where(inArray(emailOutbox.id, sentIds));
  }
  businessMetrics.mailsSent(sentIds.length);
  return sentIds.length;
}
