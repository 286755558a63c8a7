import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { overrideConfig } from '../../lib/config';
import { SesMailTransport, useMailTransport } from '../../lib/mail/transport';
import { uniqueEmail } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { mailSink } from '../harness/setup';

/**
 * The cloud mail path (lib/mail/transport.ts SesMailTransport, the real @aws-sdk/client-ses)
 * against the aws-ses-v2-local emulator, started in this process on a free port. The SDK finds it
 * through AWS_ENDPOINT_URL_SES, as it would find any endpoint override. A small recorder sits in
 * front of it and keeps each request body, because the emulator accepts ConfigurationSetName but
 * does not store it.
 */

interface StoredEmail {
  messageId: string;
  from: string;
  destination: { to: string[]; cc: string[]; bcc: string[] };
  subject: string;
  body: { text?: string; html?: string };
}

type SesEmulator = (config?: { host?: string; port?: number }) => Promise<Server>;
const emulatorModule = createRequire(import.meta.url)('aws-ses-v2-local') as { default: SesEmulator };

const FROM = 'Case Evidence (test) <no-reply@mail.case-evidence.test>';
const CONFIGURATION_SET = 'cebs-test-bounces-and-complaints';
const ENVIRONMENT = ['AWS_ENDPOINT_URL_SES', 'AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const;

let emulator: Server;
let recorder: Server;
let emulatorUrl: string;
const requestBodies: string[] = [];
const savedEnvironment: Partial<Record<(typeof ENVIRONMENT)[number], string>> = {};
let restoreConfig: () => void;

const portOf = (server: Server) => (server.address() as AddressInfo).port;

beforeAll(async () => {
  emulator = await emulatorModule.default({ host: '127.0.0.1', port: 0 });
  emulatorUrl = `http://127.0.0.1:${portOf(emulator)}`;
  recorder = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      requestBodies.push(body.toString('utf8'));
      const forwarded = request(
        `${emulatorUrl}${incoming.url}`,
        { method: incoming.method, headers: incoming.headers },
        (response) => {
          outgoing.writeHead(response.statusCode ?? 502, response.headers);
          response.pipe(outgoing);
        },
      );
      forwarded.end(body);
    });
  });
  recorder.listen(0, '127.0.0.1');
  await once(recorder, 'listening');
  for (const name of ENVIRONMENT) savedEnvironment[name] = process.env[name];
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SES: `http://127.0.0.1:${portOf(recorder)}`,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  });
  restoreConfig = overrideConfig({ MAIL_FROM: FROM, SES_CONFIGURATION_SET: CONFIGURATION_SET });
});

afterEach(() => useMailTransport(mailSink));

afterAll(async () => {
  restoreConfig?.();
  for (const name of ENVIRONMENT) {
    if (savedEnvironment[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnvironment[name];
  }
  recorder?.close();
  emulator?.close();
});

async function storedEmailsTo(address: string): Promise<StoredEmail[]> {
  const response = await fetch(`${emulatorUrl}/store`);
  const store = (await response.json()) as { emails: StoredEmail[] };
  return store.emails.filter((email) => email.destination.to.includes(address));
}

describe('SesMailTransport against aws-ses-v2-local', () => {
  it('sends from MAIL_FROM with subject, text and HTML in UTF-8, through the configuration set', async () => {
    // Prepare
    const to = uniqueEmail('ses');
    const message = {
      to,
      subject: 'Überprüfung: Ihr Zugang ✓',
      text: 'Hallo Jürgen,\nplease verify: https://app.example.test/verify?token=abc',
      html: '<p>Hallo Jürgen,</p><p><a href="https://app.example.test/verify?token=abc">verify</a></p>',
    };
    // Act
    await new SesMailTransport().send(message);
    // Assess: what the emulator stored
    const [stored, ...more] = await storedEmailsTo(to);
    expect(more).toHaveLength(0);
    expect(stored).toMatchObject({
      from: FROM,
      destination: { to: [to], cc: [], bcc: [] },
      subject: message.subject,
      body: { text: message.text, html: message.html },
    });
    // ... and what went over the wire: the SES query API with the configuration set named
    const sent = requestBodies
      .map((body) => new URLSearchParams(body))
      .find((form) => form.get('Destination.ToAddresses.member.1') === to);
    expect(sent?.get('Action')).toBe('SendEmail');
    expect(sent?.get('ConfigurationSetName')).toBe(CONFIGURATION_SET);
    expect(sent?.get('Message.Subject.Charset')).toBe('UTF-8');
  });

  it('leaves the configuration set out when none is configured', async () => {
    const restore = overrideConfig({ SES_CONFIGURATION_SET: undefined });
    try {
      const to = uniqueEmail('ses-plain');
      await new SesMailTransport().send({ to, subject: 'Plain', text: 'plain', html: '<p>plain</p>' });
      const sent = requestBodies
        .map((body) => new URLSearchParams(body))
        .find((form) => form.get('Destination.ToAddresses.member.1') === to);
      expect(sent?.has('ConfigurationSetName')).toBe(false);
      expect(await storedEmailsTo(to)).toHaveLength(1);
    } finally {
      restore();
    }
  });

  it('rejects when SES refuses the message, so the outbox keeps it for a retry', async () => {
    // The emulator, like SES, refuses a message without a subject.
    await expect(
      new SesMailTransport().send({ to: uniqueEmail('ses-refused'), subject: '', text: 't', html: '<p>t</p>' }),
    ).rejects.toMatchObject({ $metadata: { httpStatusCode: 400 } });
  });

  it('delivers a queued verification email through the outbox after the registration commits', async () => {
    useMailTransport(new SesMailTransport());
    const email = uniqueEmail('ses-register');
    expectData(
      await invoke(routes.register, {
        body: { name: 'Ses Register', email, password: 'outbox-password', acceptTerms: true },
      }),
    );
    const [stored] = await storedEmailsTo(email);
    expect(stored).toMatchObject({ from: FROM, subject: 'Verify your email address' });
    expect(stored?.body.text).toMatch(/token=/);
    expect(stored?.body.html).toMatch(/token=/);
  });
});
