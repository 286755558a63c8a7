import { NestedStack } from 'aws-cdk-lib';
import { HttpMethod, HttpRoute, HttpRouteKey, type IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { RouteDefinition } from '../../lib/http/route';
import type { EnvironmentSettings } from '../environments';
import { RouteAlarms } from './alarms';
import type { ServiceFunction } from './service-function';

/** A CloudFormation stack holds at most 500 resources; a route costs 9 (function, role, log group, permission, integration, route, 3 alarms). */
export const MAX_ROUTES_PER_STACK = 40;

export interface RouteStackProps {
  settings: EnvironmentSettings;
  description: string;
  routes: readonly RouteDefinition[];
  httpApi: IHttpApi;
  stageName: string;
  alarmTopic: ITopic;
  /** Creates (and grants) the function of a route in the given scope. */
  createFunction: (scope: Construct, route: RouteDefinition) => ServiceFunction;
}

/**
 * The routes of one area of the route table (functions/<area>/): per route its function, its
 * API Gateway route and integration, and its alarms. A nested stack, so the service is still one
 * `cdk deploy` per environment while each area stays far from the per-stack resource limit.
 */
export class RouteStack extends NestedStack {
  readonly functions = new Map<string, ServiceFunction>();

  constructor(scope: Construct, id: string, props: RouteStackProps) {
    super(scope, id, { description: props.description });
    for (const route of props.routes) {
      const construct = props.createFunction(this, route);
      this.functions.set(route.operationId, construct);
      new HttpRoute(this, `${route.operationId}Route`, {
        httpApi: props.httpApi,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: new HttpLambdaIntegration(`${route.operationId}Integration`, construct.function),
      });
      new RouteAlarms(this, `${route.operationId}Alarms`, {
        settings: props.settings,
        route,
        function: construct.function,
        apiId: props.httpApi.apiId,
        stageName: props.stageName,
        topic: props.alarmTopic,
      });
    }
  }
}

/**
 * Groups routes by area (`functions/<area>/...`), in route-table order, at most
 * MAX_ROUTES_PER_STACK per group: `auth`, `billing`, ..., `organization2` for the 41st onwards.
 */
export function groupRoutes(routes: readonly RouteDefinition[]): Array<{ area: string; routes: RouteDefinition[] }> {
  const byArea = new Map<string, RouteDefinition[]>();
  for (const route of routes) {
    const area = route.handler.split('/')[1] ?? 'misc';
    byArea.set(area, [...(byArea.get(area) ?? []), route]);
  }
  return [...byArea].flatMap(([area, list]) => {
    const groups: Array<{ area: string; routes: RouteDefinition[] }> = [];
    for (let start = 0; start < list.length; start += MAX_ROUTES_PER_STACK) {
      const index = start / MAX_ROUTES_PER_STACK;
      groups.push({
        area: index === 0 ? area : `${area}${index + 1}`,
        routes: list.slice(start, start + MAX_ROUTES_PER_STACK),
      });
    }
    return groups;
  });
}
