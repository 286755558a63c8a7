import { Rule } from 'aws-cdk-lib/aws-events';
import { SnsTopic } from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import type { AlarmTopic } from './alarm-topic';

/** AWS Backup job states that mean a recovery point was not made (or not copied). */
export const FAILED_BACKUP_JOB_STATES = ['FAILED', 'ABORTED', 'EXPIRED'];

/**
 * A backup or copy job that did not complete notifies the alarm topic. AWS Backup publishes job
 * state changes to EventBridge (no CloudWatch alarm needed: one event per failed job, with the
 * resource and the reason); a missed night would otherwise be found only at the restore.
 */
export class BackupJobAlerts extends Construct {
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: { alarmTopic: AlarmTopic }) {
    super(scope, id);
    this.rule = new Rule(this, 'FailedJobs', {
      description: 'AWS Backup: a backup or copy job failed, was aborted or expired',
      eventPattern: {
        source: ['aws.backup'],
        detailType: ['Backup Job State Change', 'Copy Job State Change'],
        detail: { state: FAILED_BACKUP_JOB_STATES },
      },
      // The SNS target adds the topic policy statement that lets EventBridge publish, and the key
      // policy statement that lets it encrypt with the topic's key.
      targets: [new SnsTopic(props.alarmTopic.topic)],
    });
  }
}
