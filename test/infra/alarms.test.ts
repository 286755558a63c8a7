import type { CfnElement } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { DatabaseInstance } from 'aws-cdk-lib/aws-rds';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import type { AlarmTopic } from '../../infra/constructs/alarm-topic';
import { PROXY_BORROW_TIMEOUT_SECONDS } from '../../infra/constructs/database';
import {
  type DatabaseAlarms,
  databaseAlarmThresholds,
  defaultMaxConnections,
  instanceClassFacts,
} from '../../infra/constructs/database-alarms';
import type { ServiceFunction } from '../../infra/constructs/service-function';
import { type EnvironmentName, environments } from '../../infra/environments';
import type { CaseEvidenceStack } from '../../infra/stack';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../../lib/http/route';
import { type SynthesizedResource, synthesizeForThisFile } from './synth';

/** Issue 18: alarms reach someone; maintenance, import and database failures raise one. */

const ENVIRONMENTS: EnvironmentName[] = ['dev', 'prod'];
const synth = synthesizeForThisFile(ENVIRONMENTS);

const stackOf = (environment: EnvironmentName): CaseEvidenceStack => synth.stacks[environment];
const ref = (stack: CaseEvidenceStack, value: unknown) => stack.resolve(value);
const logicalId = (stack: CaseEvidenceStack, construct: IConstruct) =>
  stack.getLogicalId((construct.node.defaultChild ?? construct) as CfnElement);
/** The synthesized resource of a construct of the parent stack. */
const resourceOf = (environment: EnvironmentName, construct: IConstruct): SynthesizedResource => {
  const stack = stackOf(environment);
  const id = logicalId(stack, construct);
  const [template] = synth.templates(environment);
  const resource = template!.toJSON().Resources[id];
  if (!resource) throw new Error(`${id} is not in the ${environment} template`);
  return resource;
};
const topicArn = (environment: EnvironmentName) => ref(stackOf(environment), stackOf(environment).alarmTopic.topicArn);
const expectNotifiesTopic = (environment: EnvironmentName, alarm: SynthesizedResource) => {
  expect(alarm.Properties.AlarmActions).toEqual([topicArn(environment)]);
  expect(alarm.Properties.OKActions).toEqual([topicArn(environment)]);
};

describe.each(ENVIRONMENTS)('alarm topic (%s)', (environment) => {
  it('lets CloudWatch alarms of its own account and region publish, and keeps the TLS deny', () => {
    const stack = stackOf(environment);
    const policies = synth
      .resourcesOf(environment, 'AWS::SNS::TopicPolicy')
      .filter(([, policy]) => JSON.stringify(policy.Properties.Topics) === JSON.stringify([topicArn(environment)]));
    expect(policies).toHaveLength(1);
    const statements: any[] = policies[0]![1].Properties.PolicyDocument.Statement;
    const publish = statements.find((statement) => statement.Sid === 'CloudWatchAlarmsPublish');
    expect(publish).toEqual({
      Sid: 'CloudWatchAlarmsPublish',
      Effect: 'Allow',
      Principal: { Service: 'cloudwatch.amazonaws.com' },
      Action: 'sns:Publish',
      Resource: topicArn(environment),
      Condition: {
        StringEquals: { 'aws:SourceAccount': environments[environment].account },
        ArnLike: {
          'aws:SourceArn': `arn:${ref(stack, stack.partition)}:cloudwatch:${environments[environment].region}:${environments[environment].account}:alarm:*`,
        },
      },
    });
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Deny',
        Action: 'sns:Publish',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    );
  });

  it('lets CloudWatch use the topic key, which rotates', () => {
    const stack = stackOf(environment);
    const alarmTopic = stack.node.findChild('Alarms') as AlarmTopic;
    const key = resourceOf(environment, alarmTopic.key);
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.Properties.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
      }),
    );
    expect(resourceOf(environment, alarmTopic.topic).Properties.KmsMasterKeyId).toEqual(
      ref(stack, alarmTopic.key.keyArn),
    );
  });

  it('subscribes every configured e-mail address', () => {
    const subscriptions = synth
      .resourcesOf(environment, 'AWS::SNS::Subscription')
      .map(([, subscription]) => subscription.Properties)
      .filter((properties) => JSON.stringify(properties.TopicArn) === JSON.stringify(topicArn(environment)));
    expect(subscriptions.map((properties) => [properties.Protocol, properties.Endpoint])).toEqual(
      environments[environment].alarms.emails.map((email) => ['email', email]),
    );
    expect(subscriptions.length).toBeGreaterThan(0);
  });
});

describe.each(ENVIRONMENTS)('maintenance failures (%s)', (environment) => {
  const parts = () => {
    const stack = stackOf(environment);
    return {
      stack,
      fn: (stack.node.findChild('Maintenance') as ServiceFunction).function,
      queue: stack.node.findChild('MaintenanceFailures') as Queue,
    };
  };

  it('sends a failed asynchronous run, not retried, to an encrypted TLS-only queue kept 14 days', () => {
    const { stack, fn, queue } = parts();
    const configs = synth
      .resourcesOf(environment, 'AWS::Lambda::EventInvokeConfig')
      .filter(
        ([, config]) => JSON.stringify(config.Properties.FunctionName) === JSON.stringify(ref(stack, fn.functionName)),
      );
    expect(configs).toHaveLength(1);
    expect(configs[0]![1].Properties).toMatchObject({
      MaximumRetryAttempts: 0,
      DestinationConfig: { OnFailure: { Destination: ref(stack, queue.queueArn) } },
    });
    expect(resourceOf(environment, queue).Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    const queuePolicy = synth
      .resourcesOf(environment, 'AWS::SQS::QueuePolicy')
      .find(([, policy]) => JSON.stringify(policy.Properties.Queues) === JSON.stringify([ref(stack, queue.queueUrl)]));
    expect(queuePolicy![1].Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    // The function may write its invocation records there.
    const grants = synth
      .resourcesOf(environment, 'AWS::IAM::Policy')
      .flatMap(([, policy]) => policy.Properties.PolicyDocument.Statement as any[])
      .filter((statement) => JSON.stringify(statement.Resource) === JSON.stringify(ref(stack, queue.queueArn)));
    expect(grants.flatMap((statement) => [statement.Action].flat())).toContain('sqs:SendMessage');
  });

  it('outputs the queue URL', () => {
    const { stack, queue } = parts();
    const [template] = synth.templates(environment);
    template!.hasOutput('MaintenanceFailuresQueueUrl', { Value: ref(stack, queue.queueUrl) });
  });

  it('sends an event the schedule could not deliver to the same queue', () => {
    const { stack, fn, queue } = parts();
    const rule = synth
      .resourcesOf(environment, 'AWS::Events::Rule')
      .find(([, candidate]) => candidate.Properties.Description === 'Runs lib/maintenance.ts');
    expect(rule![1].Properties.Targets).toEqual([
      expect.objectContaining({
        Arn: ref(stack, fn.functionArn),
        RetryPolicy: { MaximumRetryAttempts: 0 },
        DeadLetterConfig: { Arn: ref(stack, queue.queueArn) },
      }),
    ]);
  });

  it('alarms on any message in the failure queue and on any function error, to the alarm topic', () => {
    const { stack, fn, queue } = parts();
    const failures = resourceOf(environment, stack.node.findChild('MaintenanceFailuresAlarm'));
    expect(failures.Properties).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: ref(stack, queue.queueName) }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expectNotifiesTopic(environment, failures);
    const errors = resourceOf(environment, stack.node.findChild('MaintenanceErrorsAlarm'));
    expect(errors.Properties).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: ref(stack, fn.functionName) }],
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 1,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expectNotifiesTopic(environment, errors);
  });

  it('alarms on a run that logged an error (an import waiting near the staging expiry), to the alarm topic', () => {
    const { stack } = parts();
    const alarm = resourceOf(environment, stack.node.findChild('MaintenanceLoggedErrorsAlarm'));
    expect(alarm.Properties).toMatchObject({
      Namespace: 'CaseEvidence',
      MetricName: `MaintenanceErrors-${environment}`,
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
    expectNotifiesTopic(environment, alarm);
    const [filter] = synth
      .resourcesOf(environment, 'AWS::Logs::MetricFilter')
      .filter(
        ([, candidate]) =>
          candidate.Properties.MetricTransformations[0].MetricName === `MaintenanceErrors-${environment}`,
      );
    expect(filter![1].Properties).toMatchObject({
      FilterPattern: '{ $.level = "ERROR" }',
      LogGroupName: ref(stack, (stack.node.findChild('Maintenance') as ServiceFunction).logGroup.logGroupName),
    });
  });
});

describe.each(ENVIRONMENTS)('import worker failures (%s)', (environment) => {
  it('moves a message to the dead-letter queue after 3 receives, and alarms on it and on worker errors', () => {
    const stack = stackOf(environment);
    const { queue, deadLetterQueue } = stack.importQueue;
    expect(resourceOf(environment, queue).Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: ref(stack, deadLetterQueue.queueArn),
      maxReceiveCount: 3,
    });
    const deadLetters = resourceOf(environment, stack.importWorker.deadLetterAlarm);
    expect(deadLetters.Properties).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: ref(stack, deadLetterQueue.queueName) }],
      Threshold: 1,
    });
    expectNotifiesTopic(environment, deadLetters);
    const errors = resourceOf(environment, stack.importWorker.errorAlarm);
    const metrics = errors.Properties.Metrics.filter((metric: any) => metric.MetricStat).map(
      (metric: any) => metric.MetricStat.Metric,
    );
    expect(metrics).toContainEqual({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: ref(stack, stack.importWorker.function.function.functionName) }],
    });
    expect(errors.Properties.Threshold).toBe(1);
    expectNotifiesTopic(environment, errors);
  });

  it('is invoked only by its queue (no asynchronous invocation, so no failure destination)', () => {
    const stack = stackOf(environment);
    const worker = ref(stack, stack.importWorker.function.function.functionName);
    const mappings = synth
      .resourcesOf(environment, 'AWS::Lambda::EventSourceMapping')
      .filter(([, mapping]) => JSON.stringify(mapping.Properties.FunctionName) === JSON.stringify(worker));
    expect(mappings.map(([, mapping]) => mapping.Properties.EventSourceArn)).toEqual([
      ref(stack, stack.importQueue.queue.queueArn),
    ]);
    const workerArn = JSON.stringify(ref(stack, stack.importWorker.function.function.functionArn));
    const asyncInvokers = [
      ...synth.resourcesOf(environment, 'AWS::Events::Rule'),
      ...synth.resourcesOf(environment, 'AWS::Lambda::Permission'),
      ...synth.resourcesOf(environment, 'AWS::SNS::Subscription'),
    ].filter(([, resource]) => JSON.stringify(resource.Properties).includes(workerArn));
    expect(asyncInvokers).toEqual([]);
  });
});

describe('database alarm thresholds', () => {
  it('derive from the instance class', () => {
    expect(instanceClassFacts('t4g.micro')).toEqual({ memoryGiB: 1, cpuCreditsPerHour: 12 });
    expect(instanceClassFacts('db.r7g.large')).toEqual({ memoryGiB: 16 });
    expect(() => instanceClassFacts('x9.huge')).toThrow(/no memory figures/);
    // LEAST(DBInstanceClassMemory / 9531392, 5000), DBInstanceClassMemory = memory - 300 MiB.
    expect(defaultMaxConnections('t4g.micro')).toBe(79);
    expect(defaultMaxConnections('t4g.medium')).toBe(417);
    expect(defaultMaxConnections('r7g.4xlarge')).toBe(5000);
    expect(databaseAlarmThresholds(environments.dev)).toEqual({
      cpuPercent: 80,
      freeStorageBytes: 0.2 * 20 * 1024 ** 3,
      freeableMemoryBytes: 64 * 1024 ** 2,
      cpuCreditBalance: 58, // a fifth of 24 h x 12 credits
      connections: 63,
      proxyBorrowLatencyMicroseconds: 1_000_000,
    });
    expect(databaseAlarmThresholds(environments.prod)).toMatchObject({
      freeStorageBytes: 0.2 * 50 * 1024 ** 3,
      freeableMemoryBytes: 256 * 1024 ** 2,
      cpuCreditBalance: 115,
      connections: 333,
    });
  });
});

describe.each(ENVIRONMENTS)('database and proxy (%s)', (environment) => {
  const alarmsOf = () => {
    const stack = stackOf(environment);
    const construct = stack.node.findChild('DatabaseAlarms') as DatabaseAlarms;
    return Object.fromEntries(
      construct.alarms.map((alarm: Alarm) => [alarm.node.id, resourceOf(environment, alarm).Properties]),
    );
  };

  it('alarms on CPU, storage, memory, CPU credits and connections of the instance, to the alarm topic', () => {
    const stack = stackOf(environment);
    const settings = environments[environment];
    const thresholds = databaseAlarmThresholds(settings);
    const database = stack.node.findChild('Database') as DatabaseInstance;
    const instance = [{ Name: 'DBInstanceIdentifier', Value: ref(stack, database.instanceIdentifier) }];
    const alarms = alarmsOf();
    const expected = {
      Cpu: ['CPUUtilization', 'Average', 'GreaterThanThreshold', 80, 3],
      FreeStorage: [
        'FreeStorageSpace',
        'Minimum',
        'LessThanThreshold',
        0.2 * settings.database.allocatedStorageGb * 1024 ** 3,
        1,
      ],
      FreeableMemory: ['FreeableMemory', 'Minimum', 'LessThanThreshold', thresholds.freeableMemoryBytes, 3],
      CpuCreditBalance: ['CPUCreditBalance', 'Minimum', 'LessThanThreshold', thresholds.cpuCreditBalance, 1],
      Connections: ['DatabaseConnections', 'Maximum', 'GreaterThanThreshold', thresholds.connections, 3],
    } as const;
    for (const [id, [metricName, statistic, comparison, threshold, periods]] of Object.entries(expected)) {
      expect(alarms[id], id).toMatchObject({
        Namespace: 'AWS/RDS',
        MetricName: metricName,
        Dimensions: instance,
        Statistic: statistic,
        Period: 300,
        ComparisonOperator: comparison,
        Threshold: threshold,
        EvaluationPeriods: periods,
        TreatMissingData: 'missing',
        AlarmActions: [topicArn(environment)],
        OKActions: [topicArn(environment)],
      });
    }
    // Every environment runs a burstable (t4g) class: its CPU credits are what "burst balance" is.
    expect(settings.database.instanceType).toMatch(/^t4g\./);
    expect(Object.keys(alarms)).toHaveLength(7);
  });

  it("alarms on the proxy's p99 borrow latency above 1 s and on failed client logins", () => {
    const stack = stackOf(environment);
    const proxyName = [{ Name: 'ProxyName', Value: ref(stack, stack.proxy.dbProxyName) }];
    const alarms = alarmsOf();
    expect(alarms.ProxyBorrowLatency).toMatchObject({
      Namespace: 'AWS/RDS',
      MetricName: 'DatabaseConnectionsBorrowLatency',
      Dimensions: proxyName,
      ExtendedStatistic: 'p99',
      Period: 300,
      Threshold: 1_000_000, // microseconds
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [topicArn(environment)],
      OKActions: [topicArn(environment)],
    });
    expect(alarms.ProxyAuthFailures).toMatchObject({
      Namespace: 'AWS/RDS',
      MetricName: 'ClientConnectionsSetupFailedAuth',
      Dimensions: proxyName,
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      AlarmActions: [topicArn(environment)],
      OKActions: [topicArn(environment)],
    });
  });

  it('gives up waiting for a pooled connection well before the functions time out', () => {
    const [[, targetGroup]] = synth.resourcesOf(environment, 'AWS::RDS::DBProxyTargetGroup') as [
      [string, SynthesizedResource],
    ];
    const borrowTimeout = targetGroup.Properties.ConnectionPoolConfigurationInfo.ConnectionBorrowTimeout;
    expect(borrowTimeout).toBe(PROXY_BORROW_TIMEOUT_SECONDS);
    expect(borrowTimeout).toBeLessThanOrEqual(10);
    expect(borrowTimeout).toBeLessThan(DEFAULT_FUNCTION_TIMEOUT_SECONDS);
    expect(borrowTimeout).toBeLessThan(environments[environment].lambda.timeoutSeconds);
    // CloudFormation's schema has no Tags on a proxy target group (cfn-lint E3002): the stack's tags skip it.
    expect(targetGroup.Properties.Tags).toBeUndefined();
  });

  it('has Performance Insights (7 days, the RDS default key) in prod only', () => {
    const [[, instance]] = synth.resourcesOf(environment, 'AWS::RDS::DBInstance') as [[string, SynthesizedResource]];
    if (environment === 'prod') {
      expect(instance.Properties).toMatchObject({
        EnablePerformanceInsights: true,
        PerformanceInsightsRetentionPeriod: 7,
      });
    } else {
      expect(instance.Properties.EnablePerformanceInsights ?? false).toBe(false);
      expect(instance.Properties.PerformanceInsightsRetentionPeriod).toBeUndefined();
    }
    expect(instance.Properties.PerformanceInsightsKMSKeyId).toBeUndefined();
  });
});

describe.each(ENVIRONMENTS)('backup jobs (%s)', (environment) => {
  it('a failed, aborted or expired backup or copy job notifies the alarm topic, which EventBridge may publish to', () => {
    const rules = synth
      .resourcesOf(environment, 'AWS::Events::Rule')
      .filter(([, rule]) => rule.Properties.EventPattern?.source?.[0] === 'aws.backup');
    expect(rules).toHaveLength(1);
    const [, rule] = rules[0]!;
    expect(rule.Properties.EventPattern).toEqual({
      source: ['aws.backup'],
      'detail-type': ['Backup Job State Change', 'Copy Job State Change'],
      detail: { state: ['FAILED', 'ABORTED', 'EXPIRED'] },
    });
    expect(rule.Properties.Targets).toEqual([expect.objectContaining({ Arn: topicArn(environment) })]);

    const [policy] = synth
      .resourcesOf(environment, 'AWS::SNS::TopicPolicy')
      .filter(
        ([, candidate]) => JSON.stringify(candidate.Properties.Topics) === JSON.stringify([topicArn(environment)]),
      );
    const statements: any[] = policy![1].Properties.PolicyDocument.Statement;
    expect(statements).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Action: 'sns:Publish',
        Resource: topicArn(environment),
      }),
    );
    const [[, key]] = synth
      .resourcesOf(environment, 'AWS::KMS::Key')
      .filter(([, candidate]) => String(candidate.Properties.Description).startsWith('Alarm topic')) as [
      [string, SynthesizedResource],
    ];
    expect(key.Properties.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'events.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      }),
    );
  });
});
