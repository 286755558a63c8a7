import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { now } from '../clock';
import { config } from '../config';
import { lazyRetrying } from '../lazy';
import { traced } from '../observability/tracing';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface SentMail extends MailMessage {
  sentAt: string;
}

/** Where mail leaves the service: SES in the cloud, a local sink on a laptop and in tests. */
export interface MailTransport {
  send(message: MailMessage): Promise<void>;
}

/**
 * How many messages the local sink keeps in memory, the most recent (GET /_dev/emails shows them):
 * a few KB each, so about 5 MB at most for a server that runs for days. The file in DATA_DIR keeps
 * every message.
 */
export const MAIL_SINK_KEPT_MESSAGES = 1_000;

/**
 * Keeps the last messages in memory (served at GET /_dev/emails by the local server) and, when
 * given a directory, appends each to mail-sink.jsonl there so nothing is lost across restarts.
 */
export class LocalMailSink implements MailTransport {
  /** The last MAIL_SINK_KEPT_MESSAGES messages, oldest first. */
  readonly messages: SentMail[] = [];

  constructor(private readonly directory?: string) {}

  async send(message: MailMessage): Promise<void> {
    const sent = { ...message, sentAt: now().toISOString() };
    if (this.directory) {
      await mkdir(this.directory, { recursive: true });
      await appendFile(join(this.directory, 'mail-sink.jsonl'), `${JSON.stringify(sent)}\n`);
    }
    this.messages.push(sent);
    if (this.messages.length > MAIL_SINK_KEPT_MESSAGES) this.messages.shift();
  }
}

/**
 * Amazon SES; the SDK is imported on first send so routes that never mail don't load it. Every
 * message goes through the configuration set SES_CONFIGURATION_SET (bounce and complaint events,
 * lib/mail/suppression.ts). The SDK takes the region from AWS_REGION and an endpoint override
 * from AWS_ENDPOINT_URL_SES (the tests point it at an emulator).
 */
export class SesMailTransport implements MailTransport {
  // A failed import is tried again on the next call (lib/lazy.ts).
  private readonly client = lazyRetrying(() =>
    import('@aws-sdk/client-ses').then(({ SESClient, SendEmailCommand }) => {
      const ses = traced(new SESClient({}));
      return {
        async send(mail: MailMessage) {
          await ses.send(
            new SendEmailCommand({
              Source: config().MAIL_FROM,
              ConfigurationSetName: config().SES_CONFIGURATION_SET,
              Destination: { ToAddresses: [mail.to] },
              Message: {
                Subject: { Data: mail.subject, Charset: 'UTF-8' },
                Body: { Text: { Data: mail.text, Charset: 'UTF-8' }, Html: { Data: mail.html, Charset: 'UTF-8' } },
              },
            }),
          );
        },
      };
    }),
  );

  async send(message: MailMessage): Promise<void> {
    await (await this.client()).send(message);
  }
}

let transport: MailTransport | undefined;

export function mailTransport(): MailTransport {
  transport ??= config().MAIL_TRANSPORT === 'ses' ? new SesMailTransport() : new LocalMailSink(config().DATA_DIR);
  return transport;
}

/** The local server and tests install their own sink (or a failing one, to prove retries). */
export function useMailTransport(next: MailTransport): void {
  transport = next;
}
