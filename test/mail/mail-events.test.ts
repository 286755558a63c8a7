import type { Context, SNSEvent } from 'aws-lambda';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { handler } from '../../infra/functions/mail-events';
import { db } from '../../lib/db/client';
import { emailSuppressions } from '../../lib/db/schema';
import { uniqueEmail } from '../harness/actors';

/** SES events (configuration set event publishing) as the SNS subscription hands them to Lambda. */

/** Invokes the function as Lambda does (the handler is wrapped for metrics and tracing, which read the context). */
const deliver = (event: SNSEvent) =>
  handler(event, {
    functionName: 'MailEvents',
    awsRequestId: 'mail-events-test',
    getRemainingTimeInMillis: () => 30_000,
  } as Context);

function snsEvent(...messages: Array<string | object>): SNSEvent {
  return {
    Records: messages.map((message, index) => ({
      EventSource: 'aws:sns',
      EventVersion: '1.0',
      EventSubscriptionArn: 'arn:aws:sns:us-east-1:111111111111:MailEventsTopic:sub',
      Sns: {
        Type: 'Notification',
        MessageId: `message-${index}`,
        TopicArn: 'arn:aws:sns:us-east-1:111111111111:MailEventsTopic',
        Subject: 'Amazon SES Email Event Notification',
        Message: typeof message === 'string' ? message : JSON.stringify(message),
        Timestamp: '2026-11-24T10:00:00.000Z',
        SignatureVersion: '1',
        Signature: 'x',
        SigningCertUrl: 'https://sns.us-east-1.amazonaws.com/cert.pem',
        UnsubscribeUrl: 'https://sns.us-east-1.amazonaws.com/unsubscribe',
        MessageAttributes: {},
      },
    })),
  };
}

const mail = { timestamp: '2026-11-24T09:59:00.000Z', source: 'no-reply@dev.case-evidence.test', messageId: 'm-1' };

function bounceEvent(
  addresses: string[],
  options: { bounceType?: string; feedbackId?: string; timestamp?: string } = {},
): object {
  return {
    eventType: 'Bounce',
    bounce: {
      bounceType: options.bounceType ?? 'Permanent',
      bounceSubType: options.bounceType === 'Transient' ? 'MailboxFull' : 'General',
      bouncedRecipients: addresses.map((emailAddress) => ({
        emailAddress,
        action: 'failed',
        status: '5.1.1',
        diagnosticCode: 'smtp; 550 5.1.1 user unknown',
      })),
      timestamp: options.timestamp ?? '2026-11-24T10:00:00.000Z',
      feedbackId: options.feedbackId ?? 'bounce-feedback-1',
      reportingMTA: 'dsn; a1-2.smtp-out.amazonses.com',
    },
    mail: { ...mail, destination: addresses },
  };
}

function complaintEvent(addresses: string[], options: { feedbackId?: string; timestamp?: string } = {}): object {
  return {
    eventType: 'Complaint',
    complaint: {
      complainedRecipients: addresses.map((emailAddress) => ({ emailAddress })),
      complaintFeedbackType: 'abuse',
      timestamp: options.timestamp ?? '2026-11-24T11:00:00.000Z',
      feedbackId: options.feedbackId ?? 'complaint-feedback-1',
      userAgent: 'ExampleCorp Feedback Loop (V0.01)',
      arrivalDate: '2026-11-24T10:59:00.000Z',
    },
    mail: { ...mail, destination: addresses },
  };
}

async function suppressionOf(address: string) {
  const [row] = await db().select().from(emailSuppressions).where(eq(emailSuppressions.address, address));
  return row;
}

describe('mail-events function (SES bounces and complaints)', () => {
  it('suppresses every recipient of a permanent bounce, lowercased, and a redelivery changes nothing', async () => {
    // Prepare
    const first = uniqueEmail('hard-bounce');
    const second = uniqueEmail('hard-bounce-two');
    const event = snsEvent(bounceEvent([first.toUpperCase(), second]));
    // Act
    const outcomes = await deliver(event);
    // Assess
    expect(outcomes).toEqual([
      { outcome: 'suppressed', reason: 'bounce', addresses: [first, second], feedbackId: 'bounce-feedback-1' },
    ]);
    const row = await suppressionOf(first);
    expect(row).toMatchObject({
      address: first,
      reason: 'bounce',
      feedbackId: 'bounce-feedback-1',
      detail: 'Permanent/General: smtp; 550 5.1.1 user unknown',
      firstEventAt: new Date('2026-11-24T10:00:00.000Z'),
      lastEventAt: new Date('2026-11-24T10:00:00.000Z'),
    });
    expect(await suppressionOf(second)).toMatchObject({ reason: 'bounce' });

    // SNS and Lambda deliver at least once: the same event again leaves the row as it was.
    await deliver(event);
    expect(await suppressionOf(first)).toEqual(row);
  });

  it('suppresses a complainer and keeps the first event time when the address bounced before', async () => {
    const address = uniqueEmail('complainer');
    await deliver(snsEvent(bounceEvent([address], { feedbackId: 'b-1' })));
    const outcomes = await deliver(snsEvent(complaintEvent([address], { feedbackId: 'c-1' })));
    expect(outcomes).toEqual([{ outcome: 'suppressed', reason: 'complaint', addresses: [address], feedbackId: 'c-1' }]);
    expect(await suppressionOf(address)).toMatchObject({
      reason: 'complaint',
      feedbackId: 'c-1',
      detail: 'complaint: abuse',
      firstEventAt: new Date('2026-11-24T10:00:00.000Z'),
      lastEventAt: new Date('2026-11-24T11:00:00.000Z'),
    });

    // An older event arriving late does not overwrite the latest one.
    await deliver(snsEvent(bounceEvent([address], { feedbackId: 'b-0', timestamp: '2026-11-23T08:00:00.000Z' })));
    expect(await suppressionOf(address)).toMatchObject({
      reason: 'complaint',
      feedbackId: 'c-1',
      firstEventAt: new Date('2026-11-23T08:00:00.000Z'),
      lastEventAt: new Date('2026-11-24T11:00:00.000Z'),
    });
  });

  it.each(['Transient', 'Undetermined'])('does not suppress on a %s bounce', async (bounceType) => {
    const address = uniqueEmail(`soft-${bounceType.toLowerCase()}`);
    const outcomes = await deliver(snsEvent(bounceEvent([address], { bounceType })));
    expect(outcomes).toEqual([{ outcome: 'ignored', why: 'transient-bounce' }]);
    expect(await suppressionOf(address)).toBeUndefined();
  });

  it.each([
    ['not JSON', 'this is not json'],
    ['an empty message', ''],
    ['a bounce without recipients', { eventType: 'Bounce', bounce: { ...bounceFields(), bouncedRecipients: [] } }],
    ['a bounce with a bad timestamp', { eventType: 'Bounce', bounce: { ...bounceFields(), timestamp: 'yesterday' } }],
    ['a complaint without a feedback id', { eventType: 'Complaint', complaint: { complainedRecipients: [] } }],
    ['no event type', { mail }],
  ])('ignores %s without throwing (no retry storm)', async (_name, message) => {
    const outcomes = await deliver(snsEvent(message));
    expect(outcomes).toEqual([{ outcome: 'ignored', why: 'malformed' }]);
  });

  it('ignores events it does not act on, and handles the other records of the same delivery', async () => {
    const address = uniqueEmail('after-garbage');
    const outcomes = await deliver(
      snsEvent({ eventType: 'Delivery', delivery: {}, mail }, 'garbage', bounceEvent([address])),
    );
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['ignored', 'ignored', 'suppressed']);
    expect(await suppressionOf(address)).toMatchObject({ reason: 'bounce' });
  });

  it('accepts identity notifications (notificationType) the same way', async () => {
    const address = uniqueEmail('identity-notification');
    const { eventType: _eventType, ...rest } = bounceEvent([address]) as { eventType: string };
    await deliver(snsEvent({ notificationType: 'Bounce', ...rest }));
    expect(await suppressionOf(address)).toMatchObject({ reason: 'bounce' });
  });
});

function bounceFields() {
  return (bounceEvent(['someone@example.test']) as { bounce: Record<string, unknown> }).bounce;
}
