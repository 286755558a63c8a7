import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CfnElement, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { REPOSITORY_ROOT } from '../../infra/bundling';
import { assertMailSettings, MAIL_EVENTS_RETRY_ATTEMPTS } from '../../infra/constructs/mail';
import { type EnvironmentName, environments } from '../../infra/environments';
import type { CaseEvidenceStack } from '../../infra/stack';
import { resourcesOfFunction, synthesizeForThisFile } from './synth';

/**
 * SES on the synthesized template: the configuration set and its bounce/complaint events into an
 * encrypted topic, the mail-events function subscribed to it, the custom MAIL FROM domain with its
 * DNS records as outputs, and what the functions that mail are given (the configuration set's
 * name and ses:SendEmail on it as well as on the identity).
 */

const ENVIRONMENTS: EnvironmentName[] = ['dev', 'prod'];
// register mails (a verification email through the outbox); getProfile does not.
const synth = synthesizeForThisFile(ENVIRONMENTS, ['register', 'getProfile']);

const parentOf = (name: EnvironmentName) => synth.templates(name)[0]!;
const only = <T>(entries: Array<[string, T]>): [string, T] => {
  expect(entries).toHaveLength(1);
  return entries[0]!;
};
const configurationSetId = (name: EnvironmentName) => only(synth.resourcesOf(name, 'AWS::SES::ConfigurationSet'))[0];
const eventTopicId = (name: EnvironmentName) => {
  const topics = Object.entries(parentOf(name).findResources('AWS::SNS::Topic'));
  const [id] = only(topics.filter(([, topic]) => /SES bounces and complaints/.test(topic.Properties.DisplayName)));
  return id;
};
const mailEventsFunction = (stack: CaseEvidenceStack) => stack.functions.find((f) => f.name === 'mailEvents')!;

/** A value in a function's template, followed through the nested stack's parameters into the parent. */
function resolveToParent(functionStack: Stack, value: unknown): unknown {
  if (!NestedStack.isNestedStack(functionStack)) return value;
  const ref = (value as { Ref?: string }).Ref;
  if (!ref) return value;
  const parent = functionStack.nestedStackParent!;
  const resource =
    Template.fromStack(parent).toJSON().Resources[parent.getLogicalId(functionStack.nestedStackResource as CfnElement)];
  return resource.Properties.Parameters[ref];
}

const statementsOf = (role: { Properties: { Policies?: Array<{ PolicyDocument: { Statement: any[] } }> } }) =>
  (role.Properties.Policies ?? []).flatMap((policy) => policy.PolicyDocument.Statement);

describe.each(ENVIRONMENTS)('mail in %s', (name) => {
  const settings = environments[name];

  it('has one configuration set, named by CloudFormation, with SES account-level suppression', () => {
    const [, set] = only(synth.resourcesOf(name, 'AWS::SES::ConfigurationSet'));
    expect(set.Properties.Name).toBeUndefined();
    expect(set.Properties.SuppressionOptions).toEqual({ SuppressedReasons: ['BOUNCE', 'COMPLAINT'] });
    expect(set.Properties.SendingOptions).toEqual({ SendingEnabled: true });
  });

  it('sends bounce and complaint events to an encrypted, TLS-only topic that SES may publish to', () => {
    const setId = configurationSetId(name);
    const topicId = eventTopicId(name);
    const [, destination] = only(synth.resourcesOf(name, 'AWS::SES::ConfigurationSetEventDestination'));
    expect(destination.Properties.ConfigurationSetName).toEqual({ Ref: setId });
    expect(destination.Properties.EventDestination).toMatchObject({
      Enabled: true,
      MatchingEventTypes: ['bounce', 'complaint'],
      SnsDestination: { TopicARN: { Ref: topicId } },
    });

    const topic = parentOf(name).toJSON().Resources[topicId];
    const keyId = topic.Properties.KmsMasterKeyId['Fn::GetAtt'][0];
    const key = parentOf(name).toJSON().Resources[keyId];
    expect(key.Type).toBe('AWS::KMS::Key');
    expect(key.Properties.EnableKeyRotation).toBe(true);
    if (settings.retainData) expect(['Retain', 'RetainExceptOnCreate']).toContain(key.DeletionPolicy);
    else expect(key.DeletionPolicy).toBe('Delete');
    const sesKeyStatement = key.Properties.KeyPolicy.Statement.find(
      (s: any) => s.Principal?.Service === 'ses.amazonaws.com',
    );
    expect([...sesKeyStatement.Action].sort()).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    expect(sesKeyStatement.Condition.StringEquals['aws:SourceAccount']).toBe(settings.account);
    expect(JSON.stringify(sesKeyStatement.Condition.StringEquals['aws:SourceArn'])).toContain(
      `:ses:${settings.region}:${settings.account}:configuration-set/`,
    );

    const [, policy] = only(
      Object.entries(parentOf(name).findResources('AWS::SNS::TopicPolicy')).filter(([, p]) =>
        JSON.stringify(p.Properties.Topics).includes(topicId),
      ),
    );
    const statements = policy.Properties.PolicyDocument.Statement as any[];
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 'sns:Publish',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
    const sesPublish = statements.find((s) => s.Principal?.Service === 'ses.amazonaws.com');
    expect(sesPublish).toMatchObject({ Effect: 'Allow', Action: 'sns:Publish' });
    expect(sesPublish.Condition.StringEquals['AWS:SourceAccount']).toBe(settings.account);
    expect(JSON.stringify(sesPublish.Condition.StringEquals['AWS:SourceArn'])).toContain(setId);
  });

  it('subscribes the mail-events function, which reaches the database and cannot send mail', () => {
    const stack = synth.stacks[name];
    const deployed = mailEventsFunction(stack);
    expect(deployed).toBeDefined();
    const { fn, role } = resourcesOfFunction(deployed);
    const fnId = stack.getLogicalId(deployed.construct.function.node.defaultChild as CfnElement);
    expect(fn.Properties.Description).toMatch(/suppression list/);

    const [, subscription] = only(
      Object.entries(parentOf(name).findResources('AWS::SNS::Subscription')).filter(
        ([, s]) => s.Properties.Protocol === 'lambda',
      ),
    );
    expect(subscription.Properties).toMatchObject({
      Protocol: 'lambda',
      TopicArn: { Ref: eventTopicId(name) },
      Endpoint: { 'Fn::GetAtt': [fnId, 'Arn'] },
    });
    const permissions = Object.values(parentOf(name).findResources('AWS::Lambda::Permission')).filter(
      (p) => p.Properties.Principal === 'sns.amazonaws.com',
    );
    expect(permissions).toContainEqual(
      expect.objectContaining({
        Properties: expect.objectContaining({
          FunctionName: { 'Fn::GetAtt': [fnId, 'Arn'] },
          SourceArn: { Ref: eventTopicId(name) },
        }),
      }),
    );

    expect(fn.Properties.Environment.Variables.DATABASE_SECRET_ARN).toBeDefined();
    const actions = statementsOf(role).flatMap((s) => [s.Action].flat());
    expect(actions).toContain('secretsmanager:GetSecretValue');
    expect(actions).not.toContain('ses:SendEmail');
    expect(deployed.permissions.mail).toBe(false);
    // Runs against the migrated schema (the suppression table).
    expect(fn.DependsOn.join()).toMatch(/Migrat/);

    // Its failures reach the alarm topic.
    const alarmTopic = stack.resolve(stack.alarmTopic.topicArn);
    const [, alarm] = only(
      Object.entries(parentOf(name).findResources('AWS::CloudWatch::Alarm')).filter(
        ([, a]) =>
          a.Properties.MetricName === 'Errors' &&
          JSON.stringify(a.Properties.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: { Ref: fnId } }]),
      ),
    );
    expect(alarm.Properties).toMatchObject({ Threshold: 1, Statistic: 'Sum', Period: 300 });
    expect(alarm.Properties.AlarmActions).toEqual([alarmTopic]);
    expect(alarm.Properties.OKActions).toEqual([alarmTopic]);

    // An event it failed to record three times is kept (not dropped), and that alarms too.
    const [, invokeConfig] = only(
      Object.entries(parentOf(name).findResources('AWS::Lambda::EventInvokeConfig')).filter(
        ([, c]) => JSON.stringify(c.Properties.FunctionName) === JSON.stringify({ Ref: fnId }),
      ),
    );
    const failureQueueId = stack.getLogicalId(
      (stack.node.findChild('MailEventsFailures') as Queue).node.defaultChild as CfnElement,
    );
    expect(invokeConfig.Properties).toMatchObject({
      MaximumRetryAttempts: MAIL_EVENTS_RETRY_ATTEMPTS,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [failureQueueId, 'Arn'] } } },
    });
    const [, queueAlarm] = only(
      Object.entries(parentOf(name).findResources('AWS::CloudWatch::Alarm')).filter(
        ([, a]) =>
          a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' &&
          JSON.stringify(a.Properties.Dimensions) ===
            JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [failureQueueId, 'QueueName'] } }]),
      ),
    );
    expect(queueAlarm.Properties).toMatchObject({ Threshold: 1, AlarmActions: [alarmTopic], OKActions: [alarmTopic] });
  });

  it('verifies the sender domain with DKIM, a custom MAIL FROM domain and the configuration set as default', () => {
    const [, identity] = only(synth.resourcesOf(name, 'AWS::SES::EmailIdentity'));
    expect(identity.Properties.EmailIdentity).toBe(settings.mail.domain);
    expect(identity.Properties.MailFromAttributes).toEqual({
      MailFromDomain: settings.mail.mailFromDomain,
      BehaviorOnMxFailure: 'USE_DEFAULT_VALUE',
    });
    expect(identity.Properties.ConfigurationSetAttributes).toEqual({
      ConfigurationSetName: { Ref: configurationSetId(name) },
    });
  });

  it('outputs the MX and SPF records of the MAIL FROM domain next to the DKIM records', () => {
    const outputs = parentOf(name).toJSON().Outputs;
    expect(outputs.MailFromMxRecord.Value).toBe(
      `${settings.mail.mailFromDomain} MX 10 feedback-smtp.${settings.region}.amazonses.com`,
    );
    expect(outputs.MailFromSpfRecord.Value).toBe(
      `${settings.mail.mailFromDomain} TXT "v=spf1 include:amazonses.com ~all"`,
    );
    expect(Object.keys(outputs).filter((key) => key.startsWith('DkimRecord'))).toHaveLength(3);
  });

  it('gives every function that mails the configuration set and ses:SendEmail on it and on the identity', () => {
    const stack = synth.stacks[name];
    const setId = configurationSetId(name);
    const mailers = stack.functions.filter((f) => f.permissions.mail);
    // register (a route in a nested stack) and maintenance (the outbox retries) at least.
    expect(mailers.map((f) => f.name)).toEqual(expect.arrayContaining(['register', 'maintenance']));
    for (const deployed of mailers) {
      const { stack: functionStack, fn, role } = resourcesOfFunction(deployed);
      const variables = fn.Properties.Environment.Variables;
      expect(variables.MAIL_FROM, deployed.name).toBe(settings.mail.from);
      expect(resolveToParent(functionStack, variables.SES_CONFIGURATION_SET), deployed.name).toEqual({ Ref: setId });

      const [ses] = statementsOf(role).filter((s) => [s.Action].flat().includes('ses:SendEmail'));
      expect([ses.Action].flat(), deployed.name).toEqual(['ses:SendEmail']);
      const resources = [ses.Resource].flat();
      expect(resources, deployed.name).toContain(
        `arn:aws:ses:${settings.region}:${settings.account}:identity/${settings.mail.domain}`,
      );
      const setArn = resources.find((r) => JSON.stringify(r).includes(':configuration-set/'));
      expect(setArn, deployed.name).toBeDefined();
      const joined = (setArn as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
      expect(resolveToParent(functionStack, joined.at(-1)), deployed.name).toEqual({ Ref: setId });
    }
    for (const deployed of stack.functions.filter((f) => !f.permissions.mail)) {
      const { fn } = resourcesOfFunction(deployed);
      expect(fn.Properties.Environment.Variables.SES_CONFIGURATION_SET, deployed.name).toBeUndefined();
    }
  });
});

describe('mail settings', () => {
  it('are refused at synth when the sender is not an address of the domain, or MAIL FROM is not its subdomain', () => {
    const dev = environments.dev;
    expect(() => assertMailSettings(dev)).not.toThrow();
    const withMail = (mail: Partial<typeof dev.mail>) => ({ ...dev, mail: { ...dev.mail, ...mail } });
    expect(() => assertMailSettings(withMail({ from: 'Case Evidence <no-reply@elsewhere.test>' }))).toThrow(
      /must be an address of mail.domain/,
    );
    expect(() => assertMailSettings(withMail({ from: 'no-reply@sub.dev.case-evidence.example' }))).toThrow(
      /must be an address of mail.domain/,
    );
    expect(() => assertMailSettings(withMail({ from: `no-reply@${dev.mail.domain}` }))).not.toThrow();
    expect(() => assertMailSettings(withMail({ mailFromDomain: 'bounce.elsewhere.test' }))).toThrow(/subdomain/);
    expect(() => assertMailSettings(withMail({ mailFromDomain: dev.mail.domain }))).toThrow(/subdomain/);
  });

  it('come from infra/environments.ts only: no .example domain is hard-coded in lib/ or functions/', () => {
    const offenders: string[] = [];
    const walk = (directory: string) => {
      for (const entry of readdirSync(join(REPOSITORY_ROOT, directory), { withFileTypes: true })) {
        const path = `${directory}/${entry.name}`;
        if (entry.isDirectory()) walk(path);
        else if (
          path.endsWith('.ts') &&
          /[a-z0-9-]\.example\b/i.test(readFileSync(join(REPOSITORY_ROOT, path), 'utf8'))
        )
          offenders.push(path);
      }
    };
    walk('lib');
    walk('functions');
    expect(offenders).toEqual([]);
  });
});
