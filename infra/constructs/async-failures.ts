import { Duration, type Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { EnvironmentSettings } from '../environments';
import { acknowledge } from '../nag';
import type { ServiceFunction } from './service-function';
import { historyRemovalPolicy } from './retention';

const PERIOD = Duration.minutes(5);

/**
 * What happens to a failed asynchronous invocation of a function (a schedule, an SNS delivery):
 * after `retryAttempts` retries Lambda puts the invocation record, event included, into the
 * `<id>Failures` queue (SQS-managed encryption, TLS only, 14 days), and two alarms tell the alarm
 * topic: a message in that queue, and any error of the function. Nothing is dropped silently.
 * Built in the stack's scope (see Network), so the logical ids are `<id>Failures`,
 * `<id>FailuresAlarm` and `<id>ErrorsAlarm`.
 */
export class AsyncFailures {
  readonly queue: Queue;
  readonly failuresAlarm: Alarm;
  readonly errorsAlarm: Alarm;

  constructor(
    stack: Stack,
    id: string,
    props: {
      settings: EnvironmentSettings;
      function: ServiceFunction;
      retryAttempts: number;
      alarmTopic: ITopic;
      /** What a failure means, for the alarm descriptions: `maintenance: a run failed`. */
      failed: string;
    },
  ) {
    const fn = props.function.function;
    this.queue = new Queue(stack, `${id}Failures`, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS keeps a message: time to read what failed.
      retentionPeriod: Duration.days(14),
      removalPolicy: historyRemovalPolicy(props.settings),
    });
    acknowledge(
      this.queue,
      'AwsSolutions-SQS3',
      `This queue is itself the failure destination of the ${id} function (its failed asynchronous invocations, and for a schedule the events it could not deliver); nothing consumes it, an alarm fires on any message in it.`,
    );
    // One EventInvokeConfig holds both the retries and the destination (set here, not through
    // ServiceFunction's retryAttempts, which would create it without the destination).
    fn.configureAsyncInvoke({ retryAttempts: props.retryAttempts, onFailure: new SqsDestination(this.queue) });

    this.failuresAlarm = new Alarm(stack, `${id}FailuresAlarm`, {
      alarmDescription: `${props.failed}; its record is in the ${id}Failures queue`,
      metric: this.queue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.errorsAlarm = new Alarm(stack, `${id}ErrorsAlarm`, {
      alarmDescription: `${id}: at least one invocation failed in 5 minutes (see its log)`,
      metric: fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(props.alarmTopic);
    for (const alarm of [this.failuresAlarm, this.errorsAlarm]) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}
