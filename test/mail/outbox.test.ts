import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { addSeconds, now, testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { emailOutbox } from '../../lib/db/schema';
import { MAX_ATTEMPTS } from '../../lib/mail/outbox';
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
});
