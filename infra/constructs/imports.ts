import { Duration, type Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { FilterPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { EnvironmentSettings } from '../environments';
import { IMPORT_WORKER_NODE_FLAGS } from '../functions/import-worker-node-options';
import type { FunctionWiring } from './function-wiring';
import type { Migration } from './migration';
import type { ObjectStore } from './object-store';
import { ServiceFunction } from './service-function';
import { historyRemovalPolicy } from './retention';

/** The worker's timeout: Lambda's longest. An import that needs longer continues in the next invocation. */
export const IMPORT_WORKER_TIMEOUT_SECONDS = 15 * 60;
/**
 * AWS's guidance for a queue that is a Lambda event source: a visibility timeout of at least six
 * times the function's timeout, so a message is not handed out again while a run (and the
 * service's retries of a throttled invocation) may still hold it.
 */
export const IMPORT_QUEUE_VISIBILITY_SECONDS = 6 * IMPORT_WORKER_TIMEOUT_SECONDS;
/** Receives of a message before it moves to the dead-letter queue (and the alarm fires). */
export const IMPORT_MAX_RECEIVES = 3;
/**
 * The worker's longest statement. Batches commit in a few statements of a few seconds; one that
 * runs for minutes is stuck, and would otherwise hold the invocation until its end.
 */
const WORKER_STATEMENT_TIMEOUT_MS = 60_000;
const PERIOD = Duration.minutes(5);

/**
 * The import queue (`{ importId }` messages sent by the start and retry routes, maintenance and
 * the worker itself when it pauses) and its dead-letter queue: SQS-managed encryption, TLS only.
 * Built in the stack's scope before the functions, so FunctionWiring can grant sending to it.
 */
export class ImportQueue {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(stack: Stack, settings: EnvironmentSettings) {
    const removalPolicy = historyRemovalPolicy(settings);
    this.deadLetterQueue = new Queue(stack, 'ImportDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS keeps a message: time to find out why an import kept failing.
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    this.queue = new Queue(stack, 'Imports', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(IMPORT_QUEUE_VISIBILITY_SECONDS),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: IMPORT_MAX_RECEIVES },
      removalPolicy,
    });
  }
}

/**
 * The import worker (infra/functions/import-worker.ts): one SQS message per invocation, 15
 * minutes each, its own memory size; it copies uploads out of `staging/` (work bucket) into
 * `cases/` (evidence bucket), reads them there, writes extracted attachments under `cases/`, and
 * sends paused imports back to the queue. Alarms when a message reaches the
 * dead-letter queue and when an invocation fails. Built in the stack's scope (see Network).
 */
export class ImportWorker {
  readonly function: ServiceFunction;
  readonly deadLetterAlarm: Alarm;
  readonly errorAlarm: Alarm;

  constructor(
    stack: Stack,
    props: {
      settings: EnvironmentSettings;
      wiring: FunctionWiring;
      migration: Migration;
      objectStore: ObjectStore;
      importQueue: ImportQueue;
      alarmTopic: ITopic;
    },
  ) {
    const { settings, wiring, migration, objectStore, importQueue, alarmTopic } = props;
    const { workerMemoryMb, workerConcurrency } = settings.imports;
    this.function = new ServiceFunction(stack, 'ImportWorker', {
      ...wiring.shared,
      entry: 'infra/functions/import-worker.ts',
      description: 'Evidence imports: streams an uploaded export from S3 and imports it in batches',
      environment: {
        ...wiring.environment,
        DB_STATEMENT_TIMEOUT_MS: String(WORKER_STATEMENT_TIMEOUT_MS),
        NODE_OPTIONS: [
          ...(settings.sourceMapsAtRuntime ? ['--enable-source-maps'] : []),
          ...IMPORT_WORKER_NODE_FLAGS,
        ].join(' '),
      },
      memoryMb: workerMemoryMb,
      timeoutSeconds: IMPORT_WORKER_TIMEOUT_SECONDS,
      reservedConcurrency: workerConcurrency,
    });
    this.function.function.node.addDependency(migration.resource);
    wiring.wire('importWorker', this.function);
    // Stored attachments are streamed (lib/storage putStream: a multipart upload above 8 MiB); a
    // failed one is aborted, which S3 authorizes separately from PutObject.
    this.function.addToRolePolicy(
      new PolicyStatement({ actions: ['s3:AbortMultipartUpload'], resources: objectStore.objectArns(['cases/']) }),
    );
    this.function.function.addEventSource(
      new SqsEventSource(importQueue.queue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        // At most the reserved concurrency: the pollers never invoke more functions than may run,
        // so no message is throttled back to the queue (and towards the dead-letter queue) unrun.
        maxConcurrency: workerConcurrency,
      }),
    );

    const action = new SnsAction(alarmTopic);
    this.deadLetterAlarm = new Alarm(stack, 'ImportDeadLettersAlarm', {
      alarmDescription: `importWorker: an import message failed ${IMPORT_MAX_RECEIVES} times and is in the dead-letter queue`,
      metric: importQueue.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: PERIOD,
        statistic: 'Maximum',
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    // A run that fails is reported per message (no invocation error) and its import marked
    // failed, so the worker's ERROR log lines are counted too: the import then waits for a retry.
    const loggedErrors = new MetricFilter(stack, 'ImportWorkerLoggedErrors', {
      logGroup: this.function.logGroup,
      filterPattern: FilterPattern.stringValue('$.level', '=', 'ERROR'),
      metricNamespace: 'CaseEvidence',
      metricName: `ImportWorkerErrors-${settings.name}`,
      metricValue: '1',
      defaultValue: 0,
    });
    this.errorAlarm = new Alarm(stack, 'ImportWorkerErrorsAlarm', {
      alarmDescription:
        'importWorker: an import run failed unexpectedly or an invocation failed (crash, timeout, out of memory)',
      metric: new MathExpression({
        expression: 'FILL(invocationErrors, 0) + FILL(loggedErrors, 0)',
        usingMetrics: {
          invocationErrors: this.function.function.metricErrors({ period: PERIOD, statistic: 'Sum' }),
          loggedErrors: loggedErrors.metric({ period: PERIOD, statistic: 'Sum' }),
        },
        period: PERIOD,
        label: 'worker errors',
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    for (const alarm of [this.deadLetterAlarm, this.errorAlarm]) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}
