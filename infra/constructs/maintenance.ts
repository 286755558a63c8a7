import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { EnvironmentSettings } from '../environments';
import { acknowledge } from '../nag';
import type { FunctionWiring } from './function-wiring';
import type { Migration } from './migration';
import { ServiceFunction } from './service-function';

/**
 * A failed run is not retried: the schedule starts the next one within minutes, and a retry
 * would overlap it.
 */
export const MAINTENANCE_RETRY_ATTEMPTS = 0;
const PERIOD = Duration.minutes(5);

/**
 * The maintenance function (lib/maintenance.ts) on a schedule. EventBridge invokes it
 * asynchronously: a failed run (error, timeout, crash) goes to the `MaintenanceFailures` queue as
 * Lambda's invocation record, an event EventBridge could not deliver goes there too, and both
 * that queue and the function's errors alarm to the alarm topic. Built in the stack's scope (see
 * Network).
 */
export class Maintenance {
  readonly function: ServiceFunction;
  readonly failureQueue: Queue;
  readonly failuresAlarm: Alarm;
  readonly errorsAlarm: Alarm;

  constructor(
    stack: Stack,
    props: { settings: EnvironmentSettings; wiring: FunctionWiring; migration: Migration; alarmTopic: ITopic },
  ) {
    const { settings, wiring, migration, alarmTopic } = props;
    this.failureQueue = new Queue(stack, 'MaintenanceFailures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS keeps a message: time to read what failed.
      retentionPeriod: Duration.days(14),
      removalPolicy: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    acknowledge(
      this.failureQueue,
      'AwsSolutions-SQS3',
      'This queue is itself the failure destination of the maintenance function (asynchronous invocation records) and the dead-letter queue of its schedule; nothing consumes it, an alarm fires on any message in it.',
    );
    this.function = new ServiceFunction(stack, 'Maintenance', {
      ...wiring.shared,
      entry: 'infra/functions/maintenance.ts',
      description: 'Outbox delivery, rate-limit pruning, processor customers',
      environment: wiring.environment,
      memoryMb: 512,
      timeoutSeconds: 120,
    });
    // One EventInvokeConfig holds both the retries and the destination (set here, not through
    // ServiceFunction's retryAttempts, which would create it without the destination).
    this.function.function.configureAsyncInvoke({
      retryAttempts: MAINTENANCE_RETRY_ATTEMPTS,
      onFailure: new SqsDestination(this.failureQueue),
    });
    this.function.function.node.addDependency(migration.resource);
    wiring.wire('maintenance', this.function);
    new Rule(stack, 'MaintenanceSchedule', {
      description: 'Runs lib/maintenance.ts',
      schedule: Schedule.rate(Duration.minutes(settings.maintenanceEveryMinutes)),
      targets: [new LambdaFunction(this.function.function, { retryAttempts: 0, deadLetterQueue: this.failureQueue })],
    });

    this.failuresAlarm = new Alarm(stack, 'MaintenanceFailuresAlarm', {
      alarmDescription:
        'maintenance: a run failed (error, timeout, out of memory) or was not delivered; its record is in the MaintenanceFailures queue',
      metric: this.failureQueue.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.errorsAlarm = new Alarm(stack, 'MaintenanceErrorsAlarm', {
      alarmDescription: 'maintenance: at least one invocation failed in 5 minutes (see its log)',
      metric: this.function.function.metricErrors({ period: PERIOD, statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const action = new SnsAction(alarmTopic);
    for (const alarm of [this.failuresAlarm, this.errorsAlarm]) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}
