import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { DatabaseInstance, DatabaseProxy } from 'aws-cdk-lib/aws-rds';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { EnvironmentSettings } from '../environments';

const PERIOD = Duration.minutes(5);
const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/**
 * What the alarms need to know of an RDS instance class: its memory, and for the burstable
 * classes the CPU credits it earns per hour (vCPUs x baseline x 60). An instance class missing
 * here fails synth: add it with its figures from the RDS instance class table.
 */
export interface InstanceClassFacts {
  memoryGiB: number;
  cpuCreditsPerHour?: number;
}

const burstable = (memoryGiB: number, cpuCreditsPerHour: number): InstanceClassFacts => ({
  memoryGiB,
  cpuCreditsPerHour,
});
const BURSTABLE_SIZES = {
  micro: burstable(1, 12),
  small: burstable(2, 24),
  medium: burstable(4, 24),
  large: burstable(8, 36),
  xlarge: burstable(16, 96),
  '2xlarge': burstable(32, 192),
};
const GENERAL_PURPOSE_SIZES = { large: 8, xlarge: 16, '2xlarge': 32, '4xlarge': 64 };

export const INSTANCE_CLASSES: Readonly<Record<string, InstanceClassFacts>> = Object.fromEntries([
  ...['t4g', 't3'].flatMap((family) =>
    Object.entries(BURSTABLE_SIZES).map(([size, facts]) => [`${family}.${size}`, facts] as const),
  ),
  ...['m7g', 'm6g'].flatMap((family) =>
    Object.entries(GENERAL_PURPOSE_SIZES).map(([size, memoryGiB]) => [`${family}.${size}`, { memoryGiB }] as const),
  ),
  ...['r7g', 'r6g'].flatMap((family) =>
    Object.entries(GENERAL_PURPOSE_SIZES).map(
      ([size, memoryGiB]) => [`${family}.${size}`, { memoryGiB: 2 * memoryGiB }] as const,
    ),
  ),
]);

export function instanceClassFacts(instanceType: string): InstanceClassFacts {
  const facts = INSTANCE_CLASSES[instanceType.replace(/^db\./, '')];
  if (!facts)
    throw new Error(`infra/constructs/database-alarms.ts: no memory figures for instance class ${instanceType}`);
  return facts;
}

/**
 * Memory RDS keeps for the OS and its own processes: `DBInstanceClassMemory` (what the
 * max_connections formula divides) is the class's memory less this. RDS does not publish it; this
 * figure puts the estimate at or a few percent below what `SHOW max_connections` reports.
 */
const RDS_RESERVED_MEMORY_BYTES = 300 * MIB;

/** RDS for PostgreSQL's default max_connections: LEAST(DBInstanceClassMemory / 9531392, 5000). */
export function defaultMaxConnections(instanceType: string): number {
  const memory = instanceClassFacts(instanceType).memoryGiB * GIB - RDS_RESERVED_MEMORY_BYTES;
  return Math.min(Math.floor(memory / 9_531_392), 5000);
}

/** The thresholds of the database and proxy alarms of one environment, derived from its settings. */
export function databaseAlarmThresholds(settings: EnvironmentSettings) {
  const { instanceType, allocatedStorageGb } = settings.database;
  const facts = instanceClassFacts(instanceType);
  return {
    cpuPercent: 80,
    /** 20% of the allocated storage, in bytes (FreeStorageSpace's unit). */
    freeStorageBytes: Math.round(0.2 * allocatedStorageGb * GIB),
    /** A sixteenth of the class's memory: 64 MiB on a t4g.micro. */
    freeableMemoryBytes: Math.round((facts.memoryGiB * GIB) / 16),
    /** A fifth of what the class can bank (24 hours of earnings); undefined for a non-burstable class. */
    cpuCreditBalance:
      facts.cpuCreditsPerHour === undefined ? undefined : Math.round(0.2 * 24 * facts.cpuCreditsPerHour),
    /** 80% of the default max_connections (the proxy may use 90% of it). */
    connections: Math.floor(0.8 * defaultMaxConnections(instanceType)),
    /** p99 of the time a transaction waited for a pooled connection, in microseconds (the metric's unit). */
    proxyBorrowLatencyMicroseconds: 1_000_000,
  };
}

export interface DatabaseAlarmsProps {
  settings: EnvironmentSettings;
  instance: DatabaseInstance;
  proxy: DatabaseProxy;
  topic: ITopic;
}

/**
 * Alarms of the RDS instance (CPU, free storage, freeable memory, CPU credits of a burstable class,
 * connections) and of its proxy (borrow latency, failed client logins), all to the alarm topic
 * on ALARM and OK. Instance metrics that stop arriving (a stopped or replaced instance) leave an
 * alarm as it was; proxy metrics exist only while clients use it, so no data is no problem.
 */
export class DatabaseAlarms extends Construct {
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: DatabaseAlarmsProps) {
    super(scope, id);
    const { settings, instance, proxy } = props;
    const thresholds = databaseAlarmThresholds(settings);
    const label = `database ${settings.database.instanceType}`;
    const instanceMetric = (metricName: string, statistic: string) =>
      instance.metric(metricName, { period: PERIOD, statistic });
    const proxyMetric = (metricName: string, statistic: string) =>
      new Metric({
        namespace: 'AWS/RDS',
        metricName,
        dimensionsMap: { ProxyName: proxy.dbProxyName },
        period: PERIOD,
        statistic,
      });
    const add = (alarmId: string, props: ConstructorParameters<typeof Alarm>[2]) => {
      this.alarms.push(new Alarm(this, alarmId, props));
    };

    add('Cpu', {
      alarmDescription: `${label}: CPU above ${thresholds.cpuPercent}% for 15 minutes`,
      metric: instanceMetric('CPUUtilization', 'Average'),
      threshold: thresholds.cpuPercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.MISSING,
    });
    add('FreeStorage', {
      alarmDescription: `${label}: less than 20% of the allocated ${settings.database.allocatedStorageGb} GiB free`,
      metric: instanceMetric('FreeStorageSpace', 'Minimum'),
      threshold: thresholds.freeStorageBytes,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.MISSING,
    });
    add('FreeableMemory', {
      alarmDescription: `${label}: less than ${thresholds.freeableMemoryBytes / MIB} MiB freeable memory for 15 minutes`,
      metric: instanceMetric('FreeableMemory', 'Minimum'),
      threshold: thresholds.freeableMemoryBytes,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.MISSING,
    });
    if (thresholds.cpuCreditBalance !== undefined) {
      add('CpuCreditBalance', {
        alarmDescription: `${label}: CPU credit balance below ${thresholds.cpuCreditBalance} (a fifth of a day's earnings); above-baseline CPU is soon billed as surplus credits`,
        metric: instanceMetric('CPUCreditBalance', 'Minimum'),
        threshold: thresholds.cpuCreditBalance,
        comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.MISSING,
      });
    }
    add('Connections', {
      alarmDescription: `${label}: more than ${thresholds.connections} connections (80% of max_connections ${defaultMaxConnections(settings.database.instanceType)}) for 15 minutes`,
      metric: instanceMetric('DatabaseConnections', 'Maximum'),
      threshold: thresholds.connections,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.MISSING,
    });
    add('ProxyBorrowLatency', {
      alarmDescription: `${label} proxy: p99 wait for a pooled connection above 1 s over 5 minutes (pool at its cap)`,
      metric: proxyMetric('DatabaseConnectionsBorrowLatency', 'p99'),
      threshold: thresholds.proxyBorrowLatencyMicroseconds,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    add('ProxyAuthFailures', {
      alarmDescription: `${label} proxy: a client login failed (a password that no longer matches its secret)`,
      metric: proxyMetric('ClientConnectionsSetupFailedAuth', 'Sum'),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const action = new SnsAction(props.topic);
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}
