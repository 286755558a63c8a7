import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { addSeconds, now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { emailOutbox } from '../../lib/db/schema';
import { MAX_ATTEMPTS } from '../../lib/mail/outbox';
import { suppress } from '../../lib/mail/suppression';
import { type MailMessage, useMailTransport } from '../../lib/mail/transport';
import { runMaintenance } from '../../lib/maintenance';
import { uniqueEmail } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { mailSink } from '../harness/setup';

/** A mail service that is down. */
const failingTransport = { send: async (_message: MailMessage) => Promise.reject(new Error('SES unavailable')) };

afterEach(() => useMailTransport(mailSink));

async function outboxRowsTo(address: string) {
  return db().select().from(emailOutbox).where(eq(emailOutbox.toAddress, address));
}

describe('email outbox', () => {
  it('keeps the change and the email when sending fails, and delivers it on a later run', async () => {
    // Prepare: mail is down while a user registers
    useMailTransport(failingTransport);
    const email = uniqueEmail('outbox');
    // Act
    const registered = await invoke(routes.register, {
      body: { name: 'Out Box', email, password: 'outbox-password', acceptTerms: true },
    });
    // Assess: the request succeeded and the email waits in the outbox
    expectData(registered);
    const [pending] = await outboxRowsTo(email);
    expect(pending).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: 'SES unavailable',
      subject: 'Verify your email address',
    });

    // Not due yet: nothing is sent before the backoff passes.
    useMailTransport(mailSink);
    await runMaintenance();
    expect(mailSink.messages.filter((m) => m.to === email)).toHaveLength(0);

    testClock.advance(31);
    await runMaintenance();
    const [sent] = await outboxRowsTo(email);
    expect(sent).toMatchObject({ status: 'sent', attempts: 2, lastError: null });
    expect(mailSink.messages.filter((m) => m.to === email).map((m) => m.subject)).toEqual([
      'Verify your email address',
    ]);
  });

  it('gives up after the last attempt and marks the message failed', async () => {
    useMailTransport(failingTransport);
    const email = uniqueEmail('doomed');
    expectData(
      await invoke(routes.register, {
        body: { name: 'Doomed', email, password: 'outbox-password', acceptTerms: true },
      }),
    );
    for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt += 1) {
      testClock.advance(3600);
      await runMaintenance();
    }
    const [row] = await outboxRowsTo(email);
    expect(row).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS });
    testClock.advance(3600);
    useMailTransport(mailSink);
    await runMaintenance();
    expect(mailSink.messages.filter((m) => m.to === email)).toHaveLength(0);
  });

  it('retries a message whose sender died while it was leased', async () => {
    const email = uniqueEmail('lease');
    await db()
      .insert(emailOutbox)
      .values({
        toAddress: email,
        subject: 'Leased',
        textBody: 't',
        htmlBody: '<p>t</p>',
        status: 'sending',
        attempts: 1,
        nextAttemptAt: addSeconds(now(), 60),
      });
    await runMaintenance();
    expect(mailSink.messages.filter((m) => m.to === email)).toHaveLength(0);
    testClock.advance(61);
    await runMaintenance();
    expect(mailSink.messages.filter((m) => m.to === email)).toHaveLength(1);
  });

  it('does not send to a suppressed address: the message is kept, marked suppressed, and never retried', async () => {
    // Prepare: the address bounced permanently before (SES reports it lowercased or not)
    const email = uniqueEmail('suppressed');
    await suppress([{ address: email.toUpperCase() }], { reason: 'bounce', at: now(), feedbackId: 'f-1' });
    // Act: the user registers, which queues a verification email
    const registered = await invoke(routes.register, {
      body: { name: 'Sup Pressed', email, password: 'outbox-password', acceptTerms: true },
    });
    // Assess: the request succeeded, nothing reached the mail service, the row records why
    expectData(registered);
    expect(mailSink.messages.filter((m) => m.to === email)).toHaveLength(0);
    const [row] = await outboxRowsTo(email);
    expect(row).toMatchObject({
      status: 'suppressed',
      attempts: 1,
      lastError: 'address suppressed (bounce)',
      sentAt: null,
      subject: 'Verify your email address',
    });
    testClock.advance(3600);
    await runMaintenance();
    expect(mailSink.messages.filter((m) => m.to === email)).toHaveLength(0);
    expect((await outboxRowsTo(email))[0]).toMatchObject({ status: 'suppressed', attempts: 1 });
  });

  it('stops retrying a message whose address was suppressed after it was queued', async () => {
    useMailTransport(failingTransport);
    const email = uniqueEmail('complains-later');
    expectData(
      await invoke(routes.register, {
        body: { name: 'Later', email, password: 'outbox-password', acceptTerms: true },
      }),
    );
    expect((await outboxRowsTo(email))[0]).toMatchObject({ status: 'pending', attempts: 1 });
    await suppress([{ address: email }], { reason: 'complaint', at: now(), feedbackId: 'f-2' });
    useMailTransport(mailSink);
    testClock.advance(31);
    await runMaintenance();
    expect(mailSink.messages.filter((m) => m.to === email)).toHaveLength(0);
    expect((await outboxRowsTo(email))[0]).toMatchObject({
      status: 'suppressed',
      attempts: 2,
      lastError: 'address suppressed (complaint)',
    });
  });

  it('still sends to other recipients of the same delivery', async () => {
    const blocked = uniqueEmail('blocked');
    const fine = uniqueEmail('fine');
    await suppress([{ address: blocked }], { reason: 'bounce', at: now(), feedbackId: 'f-3' });
    await db()
      .insert(emailOutbox)
      .values(
        [blocked, fine].map((toAddress) => ({
          toAddress,
          subject: 'Both',
          textBody: 't',
          htmlBody: '<p>t</p>',
          nextAttemptAt: now(),
        })),
      );
    expect(await runMaintenance()).toMatchObject({ emailsSent: 1 });
    expect(mailSink.messages.filter((m) => m.to === fine)).toHaveLength(1);
    expect(mailSink.messages.filter((m) => m.to === blocked)).toHaveLength(0);
    expect((await outboxRowsTo(blocked))[0]).toMatchObject({ status: 'suppressed' });
    expect((await outboxRowsTo(fine))[0]).toMatchObject({ status: 'sent' });
  });
});
