import { Stack } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { EnvironmentSettings } from '../environments';

const CLOUDWATCH = new ServicePrincipal('cloudwatch.amazonaws.com');

/**
 * The SNS topic every alarm notifies: encrypted with its own key, publishers must use TLS,
 * CloudWatch alarms of this account and region may publish, and every address of
 * `settings.alarms.emails` is subscribed (each confirms once).
 */
export class AlarmTopic extends Construct {
  readonly topic: Topic;
  readonly key: Key;

  constructor(scope: Construct, id: string, settings: EnvironmentSettings) {
    super(scope, id);
    const { account, region, partition } = Stack.of(this);
    this.key = new Key(this, 'Key', {
      description: `Alarm topic of case-evidence-${settings.name}`,
      enableKeyRotation: true,
    });
    // CloudWatch encrypts the notification with the topic's key when it publishes. Not narrowed by
    // aws:SourceAccount: the key serves this topic only and the topic policy below already admits
    // only this account's alarms; a condition KMS does not receive would drop every alarm silently.
    this.key.grant(CLOUDWATCH, 'kms:Decrypt', 'kms:GenerateDataKey');
    this.topic = new Topic(this, 'Topic', {
      displayName: `case-evidence-${settings.name} alarms`,
      masterKey: this.key,
      enforceSSL: true,
    });
    // enforceSSL gives the topic a policy of its own (its TLS Deny), which replaces SNS's default
    // policy: without this statement CloudWatch could not publish and alarms would notify nobody.
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [CLOUDWATCH],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': account },
          ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
        },
      }),
    );
    for (const email of settings.alarms.emails) this.topic.addSubscription(new EmailSubscription(email));
  }
}
