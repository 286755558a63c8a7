import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { RouteDefinition } from '../../lib/http/route';
import type { EnvironmentSettings } from '../environments';

const PERIOD = Duration.minutes(5);
/** Below this many requests in a period a 5xx share is noise (one failure out of two requests). */
const MIN_REQUESTS_FOR_ERROR_RATE = 10;

export interface RouteAlarmsProps {
  settings: EnvironmentSettings;
  route: RouteDefinition;
  function: IFunction;
  apiId: string;
  stageName: string;
  topic: ITopic;
}

/**
 * A route's alarms: share of 5xx answers, throttled invocations of its function, p99 latency.
 * API Gateway publishes the per-route metrics (dimensions ApiId, Stage, Method, Resource) because
 * the stage enables detailed metrics.
 */
export class RouteAlarms extends Construct {
  readonly serverErrorRate: Alarm;
  readonly throttles: Alarm;
  readonly p99Latency: Alarm;

  constructor(scope: Construct, id: string, props: RouteAlarmsProps) {
    super(scope, id);
    const { settings, route } = props;
    const dimensionsMap = { ApiId: props.apiId, Stage: props.stageName, Method: route.method, Resource: route.path };
    const apiMetric = (metricName: string, statistic: string) =>
      new Metric({ namespace: 'AWS/ApiGateway', metricName, dimensionsMap, statistic, period: PERIOD });
    const label = `${route.operationId} (${route.method} ${route.path})`;

    this.serverErrorRate = new Alarm(this, 'ServerErrorRate', {
      // Also the rollback trigger of the route's CodeDeploy deployments (RouteStack).
      alarmDescription: `${label}: more than ${settings.alarms.errorRatePercent}% of requests answered 5xx over 5 minutes; stops and rolls back a deployment of the route's function`,
      metric: new MathExpression({
        expression: `IF(requests >= ${MIN_REQUESTS_FOR_ERROR_RATE}, 100 * errors / requests, 0)`,
        usingMetrics: { errors: apiMetric('5xx', 'Sum'), requests: apiMetric('Count', 'Sum') },
        period: PERIOD,
        label: '5xx %',
      }),
      threshold: settings.alarms.errorRatePercent,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    this.throttles = new Alarm(this, 'Throttles', {
      alarmDescription: `${label}: its function was throttled (reserved or account concurrency exhausted)`,
      metric: props.function.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // Slow-by-design routes (reports: 60 s timeout) alarm at half their timeout instead.
    const latencyThreshold = Math.max(settings.alarms.p99LatencyMs, ((route.lambda?.timeoutSeconds ?? 0) * 1000) / 2);
    this.p99Latency = new Alarm(this, 'P99Latency', {
      alarmDescription: `${label}: p99 latency above ${latencyThreshold} ms over 5 minutes`,
      metric: apiMetric('Latency', 'p99'),
      threshold: latencyThreshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    const action = new SnsAction(props.topic);
    for (const alarm of [this.serverErrorRate, this.throttles, this.p99Latency]) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }
}
