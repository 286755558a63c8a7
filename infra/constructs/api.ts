import { Duration } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  CorsHttpMethod,
  HttpApi,
  HttpStage,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import { CORS_HEADERS } from '../../lib/http/cors';
import type { RouteDefinition } from '../../lib/http/route';
import type { EnvironmentSettings } from '../environments';
import { historyRemovalPolicy } from './retention';

/** `POST /auth/login`: the HTTP API route key, also the key of its stage route settings. */
export const routeKey = (route: RouteDefinition) => `${route.method} ${route.path}`;

/**
 * The HTTP API (payload 2.0, the event the handlers and the local server speak). Its routes live
 * beside their functions (RouteStack); the `$default` stage carries the default throttle, one
 * throttle per route (RouteSettings), detailed per-route metrics (the alarms read them) and JSON
 * access logs; CORS preflight is answered by API Gateway.
 */
export class Api extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;

  constructor(scope: Construct, id: string, props: { settings: EnvironmentSettings }) {
    super(scope, id);
    const { settings } = props;
    this.httpApi = new HttpApi(this, 'HttpApi', {
      apiName: `case-evidence-${settings.name}`,
      description: `Case Evidence and Billing Service (${settings.name})`,
      createDefaultStage: false,
      // Only the edge (infra/constructs/edge.ts: CloudFront and its web ACL) reaches the API, through
      // its custom domain: the default https://<id>.execute-api.<region>.amazonaws.com is turned off.
      disableExecuteApiEndpoint: true,
      corsPreflight: {
        allowOrigins: settings.corsOrigins,
        allowMethods: [CorsHttpMethod.ANY],
        allowHeaders: [...CORS_HEADERS.allow],
        exposeHeaders: [...CORS_HEADERS.expose],
        maxAge: Duration.hours(1),
      },
    });
    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: settings.logRetention,
      removalPolicy: historyRemovalPolicy(settings),
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      detailedMetricsEnabled: true,
      throttle: { rateLimit: settings.defaultThrottle.rate, burstLimit: settings.defaultThrottle.burst },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTime',
            ip: '$context.identity.sourceIp',
            userAgent: '$context.identity.userAgent',
            routeKey: '$context.routeKey',
            path: '$context.path',
            status: '$context.status',
            responseLength: '$context.responseLength',
            latencyMs: '$context.responseLatency',
            integrationLatencyMs: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            error: '$context.error.message',
          }),
        ),
      },
    });
  }

  /**
   * One throttle per route (stage RouteSettings, keyed by route key) on top of the stage default.
   * The stage names routes by key, so it is updated after the constructs holding them.
   */
  setRouteThrottles(routes: readonly RouteDefinition[], routesDeployedBy: readonly IConstruct[]): void {
    const cfnStage = this.stage.node.defaultChild as CfnStage;
    cfnStage.routeSettings = Object.fromEntries(
      routes.map((route) => [
        routeKey(route),
        {
          ThrottlingRateLimit: route.throttle.rate,
          ThrottlingBurstLimit: route.throttle.burst,
          DetailedMetricsEnabled: true,
        },
      ]),
    );
    for (const construct of routesDeployedBy) cfnStage.node.addDependency(construct);
  }
}
