import { Duration, type Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { EnvironmentSettings } from '../environments';
import { AsyncFailures } from './async-failures';
import type { FunctionWiring } from './function-wiring';
import type { Migration } from './migration';
import { ServiceFunction } from './service-function';

/**
 * A failed run is not retried: the schedule starts the next one within minutes, and a retry
 * would overlap it.
 */
export const MAINTENANCE_RETRY_ATTEMPTS = 0;

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
  /** A run that logged an ERROR line and still ended well (an import waiting near the staging expiry, say). */
  readonly loggedErrorsAlarm: Alarm;

  constructor(
    stack: Stack,
    props: { settings: EnvironmentSettings; wiring: FunctionWiring; migration: Migration; alarmTopic: ITopic },
  ) {
    const { settings, wiring, migration, alarmTopic } = props;
    this.function = new ServiceFunction(stack, 'Maintenance', {
      ...wiring.shared,
      entry: 'infra/functions/maintenance.ts',
      description: 'Outbox delivery, rate-limit pruning, processor customers',
      environment: wiring.environment,
      memoryMb: 512,
      timeoutSeconds: 120,
    });
    const failures = new AsyncFailures(stack, 'Maintenance', {
      settings,
      function: this.function,
      retryAttempts: MAINTENANCE_RETRY_ATTEMPTS,
      alarmTopic,
      failed: 'maintenance: a run failed (error, timeout, out of memory) or was not delivered',
    });
    this.failureQueue = failures.queue;
    this.failuresAlarm = failures.failuresAlarm;
    this.errorsAlarm = failures.errorsAlarm;
    // A run that completes may still have something to report: an import waiting so long that its
    // upload nears the staging expiry (lib/material/imports/staging-watch.ts) is logged at ERROR.
    const loggedErrors = new MetricFilter(stack, 'MaintenanceLoggedErrors', {
      logGroup: this.function.logGroup,
      filterPattern: FilterPattern.stringValue('$.level', '=', 'ERROR'),
      metricNamespace: 'CaseEvidence',
      metricName: `MaintenanceErrors-${settings.name}`,
      metricValue: '1',
      defaultValue: 0,
    });
    this.loggedErrorsAlarm = new Alarm(stack, 'MaintenanceLoggedErrorsAlarm', {
      alarmDescription:
        'maintenance: a run logged an error (see its log): an import waiting near the staging expiry, a step that failed',
      metric: loggedErrors.metric({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.loggedErrorsAlarm.addAlarmAction(new SnsAction(alarmTopic));
    this.loggedErrorsAlarm.addOkAction(new SnsAction(alarmTopic));
    this.function.function.node.addDependency(migration.resource);
    wiring.wire('maintenance', this.function);
    new Rule(stack, 'MaintenanceSchedule', {
      description: 'Runs lib/maintenance.ts',
      schedule: Schedule.rate(Duration.minutes(settings.maintenanceEveryMinutes)),
      targets: [new LambdaFunction(this.function.function, { retryAttempts: 0, deadLetterQueue: this.failureQueue })],
    });
  }
}
