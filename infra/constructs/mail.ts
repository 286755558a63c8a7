import { CfnOutput, type Stack } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import {
  ConfigurationSet,
  EmailIdentity,
  EmailSendingEvent,
  EventDestination,
  Identity,
  MailFromBehaviorOnMxFailure,
  SuppressionReasons,
} from 'aws-cdk-lib/aws-ses';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import { LambdaSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { EnvironmentSettings } from '../environments';
import { AsyncFailures } from './async-failures';
import type { FunctionWiring } from './function-wiring';
import type { Migration } from './migration';
import { ServiceFunction } from './service-function';
import { historyRemovalPolicy } from './retention';

/** The address part of `Name <address>` or of a bare address. */
function addressOf(from: string): string {
  return (/<([^<>]+)>\s*$/.exec(from)?.[1] ?? from).trim();
}

/** Synth refuses mail settings SES would refuse at send time (or at deploy, for MAIL FROM). */
export function assertMailSettings(settings: EnvironmentSettings): void {
  const { domain, from, mailFromDomain } = settings.mail;
  const address = addressOf(from);
  const at = address.lastIndexOf('@');
  if (at < 1 || address.slice(at + 1).toLowerCase() !== domain.toLowerCase())
    throw new Error(`${settings.name}: mail.from (${from}) must be an address of mail.domain (${domain})`);
  if (!mailFromDomain.toLowerCase().endsWith(`.${domain.toLowerCase()}`))
    throw new Error(`${settings.name}: mail.mailFromDomain (${mailFromDomain}) must be a subdomain of ${domain}`);
}

/**
 * The SES sending identity (its DKIM records are stack outputs) with a custom MAIL FROM domain,
 * and the configuration set every message is sent with: SES's account-level suppression for
 * bounces and complaints, and bounce and complaint events into an encrypted SNS topic, which
 * MailEvents turns into the outbox's suppression list. Built in the stack's scope (see Network).
 */
export class Mail {
  readonly identity: EmailIdentity;
  readonly configurationSet: ConfigurationSet;
  /** Bounce and complaint events of the configuration set. */
  readonly eventTopic: Topic;
  /** The identities a function that sends mail may send as. */
  readonly identityArns: string[];
  /** SES authorizes ses:SendEmail against the configuration set too when a message uses one. */
  readonly configurationSetArn: string;

  constructor(stack: Stack, settings: EnvironmentSettings) {
    assertMailSettings(settings);
    const { domain, mailFromDomain } = settings.mail;

    // No name: CloudFormation generates one, so environments sharing an account never collide.
    this.configurationSet = new ConfigurationSet(stack, 'MailConfigurationSet', {
      // The second line behind our own list: SES itself drops mail to addresses on the account's
      // suppression list (and reports it as a permanent bounce, which our list records too).
      suppressionReasons: SuppressionReasons.BOUNCES_AND_COMPLAINTS,
      reputationMetrics: true,
      sendingEnabled: true,
    });
    this.configurationSetArn = stack.formatArn({
      service: 'ses',
      resource: 'configuration-set',
      resourceName: this.configurationSet.configurationSetName,
    });

    const key = new Key(stack, 'MailEventsKey', {
      description: `SES bounce and complaint events of case-evidence-${settings.name}`,
      enableKeyRotation: true,
      removalPolicy: historyRemovalPolicy(settings),
    });
    // SES publishes into the encrypted topic: it needs the key, for this configuration set only.
    key.addToResourcePolicy(
      new PolicyStatement({
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        principals: [new ServicePrincipal('ses.amazonaws.com')],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account, 'aws:SourceArn': this.configurationSetArn } },
      }),
    );
    this.eventTopic = new Topic(stack, 'MailEventsTopic', {
      displayName: `case-evidence-${settings.name} SES bounces and complaints`,
      masterKey: key,
      enforceSSL: true,
    });
    // Adds the topic policy that lets SES (this account, this configuration set) publish.
    this.configurationSet.addEventDestination('BouncesAndComplaints', {
      destination: EventDestination.snsTopic(this.eventTopic),
      events: [EmailSendingEvent.BOUNCE, EmailSendingEvent.COMPLAINT],
    });

    this.identity = new EmailIdentity(stack, 'MailIdentity', {
      identity: Identity.domain(domain),
      // Mail sent without naming a configuration set still goes through this one.
      configurationSet: this.configurationSet,
      mailFromDomain,
      // Until the MX record exists (or if it breaks) SES sends from amazonses.com instead of failing.
      mailFromBehaviorOnMxFailure: MailFromBehaviorOnMxFailure.USE_DEFAULT_VALUE,
    });
    this.identityArns = [domain, ...(settings.mail.extraIdentities ?? [])].map((identity) =>
      stack.formatArn({ service: 'ses', resource: 'identity', resourceName: identity }),
    );

    new CfnOutput(stack, 'MailFromMxRecord', {
      value: `${mailFromDomain} MX 10 feedback-smtp.${stack.region}.amazonses.com`,
      description: `DNS record for the custom MAIL FROM domain ${mailFromDomain} (bounces come back through it)`,
    });
    new CfnOutput(stack, 'MailFromSpfRecord', {
      value: `${mailFromDomain} TXT "v=spf1 include:amazonses.com ~all"`,
      description: `SPF record for the custom MAIL FROM domain ${mailFromDomain}`,
    });
  }
}

/** SNS invokes asynchronously: a database failure is retried twice (recording is idempotent). */
export const MAIL_EVENTS_RETRY_ATTEMPTS = 2;

/**
 * The function that records SES bounces and complaints (infra/functions/mail-events.ts),
 * subscribed to the Mail event topic. An event it failed to record three times is kept in the
 * `MailEventsFailures` queue (AsyncFailures), with alarms on that queue and on its errors; SES's
 * account-level list holds the address meanwhile. Built in the stack's scope (see Network).
 */
export class MailEvents {
  readonly function: ServiceFunction;
  readonly failureQueue: Queue;
  readonly errorsAlarm: Alarm;
  readonly failuresAlarm: Alarm;

  constructor(
    stack: Stack,
    props: {
      settings: EnvironmentSettings;
      wiring: FunctionWiring;
      migration: Migration;
      mail: Mail;
      alarmTopic: ITopic;
    },
  ) {
    const { wiring, migration, mail, alarmTopic } = props;
    this.function = new ServiceFunction(stack, 'MailEvents', {
      ...wiring.shared,
      entry: 'infra/functions/mail-events.ts',
      description: 'SES bounces and complaints into the email suppression list',
      environment: wiring.environment,
      memoryMb: 256,
      timeoutSeconds: 30,
    });
    this.function.function.node.addDependency(migration.resource);
    wiring.wire('mailEvents', this.function);
    mail.eventTopic.addSubscription(new LambdaSubscription(this.function.function));

    const failures = new AsyncFailures(stack, 'MailEvents', {
      settings: props.settings,
      function: this.function,
      retryAttempts: MAIL_EVENTS_RETRY_ATTEMPTS,
      alarmTopic,
      failed:
        'mail events: an SES bounce or complaint was not recorded after 3 attempts (database unreachable?); redrive it once the cause is fixed',
    });
    this.failureQueue = failures.queue;
    this.errorsAlarm = failures.errorsAlarm;
    this.failuresAlarm = failures.failuresAlarm;
  }
}
