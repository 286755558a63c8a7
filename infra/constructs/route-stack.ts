import { NestedStack } from 'aws-cdk-lib';
import { HttpMethod, HttpRoute, HttpRouteKey, type IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import {
  type ILambdaDeploymentConfig,
  LambdaApplication,
  LambdaDeploymentConfig,
  LambdaDeploymentGroup,
} from 'aws-cdk-lib/aws-codedeploy';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import type { RouteDefinition } from '../../lib/http/route';
import type { EnvironmentSettings } from '../environments';
import { acknowledge } from '../nag';
import { RouteAlarms } from './alarms';
import type { ServiceFunction } from './service-function';

/**
 * CloudFormation resources of one route: function, role, log group, version, `live` alias,
 * CodeDeploy deployment group, API Gateway permission, integration and route, 3 alarms.
 */
export const RESOURCES_PER_ROUTE = 12;
/** Resources of a route stack whatever its routes: the CodeDeploy application and its service role. */
export const RESOURCES_PER_ROUTE_STACK = 2;
/** A stack holds at most 500 resources; route stacks stay under 450, room for a resource more per route. */
export const ROUTE_STACK_RESOURCE_BUDGET = 450;
export const MAX_ROUTES_PER_STACK = Math.floor(
  (ROUTE_STACK_RESOURCE_BUDGET - RESOURCES_PER_ROUTE_STACK) / RESOURCES_PER_ROUTE,
);

/** Name of the alias API Gateway invokes; CodeDeploy shifts it from version to version. */
export const LIVE_ALIAS = 'live';

const DEPLOYMENT_CONFIGS: Record<EnvironmentSettings['deployment'], ILambdaDeploymentConfig> = {
  ALL_AT_ONCE: LambdaDeploymentConfig.ALL_AT_ONCE,
  CANARY_10PERCENT_5MINUTES: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
};

const CODEDEPLOY_LAMBDA_POLICY = 'service-role/AWSCodeDeployRoleForLambdaLimited';

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
 * The routes of one area of the route table (functions/<area>/): per route its function, the
 * `live` alias API Gateway invokes (moved from version to version by CodeDeploy: a canary in prod,
 * rolled back on the route's 5xx alarm), its API Gateway route and integration, and its alarms.
 * A nested stack, so the service is still one `cdk deploy` per environment while each area stays
 * far from the per-stack resource limit.
 */
export class RouteStack extends NestedStack {
  readonly functions = new Map<string, ServiceFunction>();
  /** The `live` alias of each route's function, by operationId: what API Gateway invokes. */
  readonly aliases = new Map<string, Alias>();
  readonly deploymentGroups = new Map<string, LambdaDeploymentGroup>();
  readonly alarms = new Map<string, RouteAlarms>();

  constructor(scope: Construct, id: string, props: RouteStackProps) {
    super(scope, id, { description: props.description });
    const { settings } = props;
    // One CodeDeploy application and one service role for every route of the stack (CDK would
    // create a role per deployment group: one more resource per route).
    const application = new LambdaApplication(this, 'Deployments');
    const deploymentRole = new Role(this, 'DeploymentRole', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      description: `CodeDeploy: shifts the live aliases of ${props.description}`.slice(0, 1000),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName(CODEDEPLOY_LAMBDA_POLICY)],
    });
    acknowledge(
      deploymentRole,
      `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${CODEDEPLOY_LAMBDA_POLICY}]`,
      'The AWS managed policy made for CodeDeploy Lambda deployments (read alarms, get and update aliases, publish to CodeDeploy-named topics, invoke CodeDeployHook_* functions); AWS keeps it in step with what CodeDeploy calls, and a deployment that misses a permission fails only in the cloud.',
    );
    // Every group adds the managed policy to its role again: the role already has it.
    const sharedRole = deploymentRole.withoutPolicyUpdates();
    // `cdk deploy -c ignoreDeploymentAlarms=true`: a hotfix while a route's alarm is in ALARM
    // (CodeDeploy refuses to start a deployment then). The next deployment without it restores them.
    const ignoreAlarms = String(this.node.tryGetContext('ignoreDeploymentAlarms')) === 'true';

    for (const route of props.routes) {
      const construct = props.createFunction(this, route);
      this.functions.set(route.operationId, construct);
      // A new version whenever the function's code or configuration changes; the old version is
      // deleted once the alias has moved off it (CloudFormation cleans up after a successful update).
      const version = construct.function.currentVersion;
      const alias = new Alias(this, `${route.operationId}Live`, { aliasName: LIVE_ALIAS, version });
      this.aliases.set(route.operationId, alias);
      new HttpRoute(this, `${route.operationId}Route`, {
        httpApi: props.httpApi,
        routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
        integration: new HttpLambdaIntegration(`${route.operationId}Integration`, alias),
      });
      const alarms = new RouteAlarms(this, `${route.operationId}Alarms`, {
        settings,
        route,
        function: construct.function,
        apiId: props.httpApi.apiId,
        stageName: props.stageName,
        topic: props.alarmTopic,
      });
      this.alarms.set(route.operationId, alarms);
      // The route's 5xx share is what its clients see, handled errors (500 in our envelope) and
      // crashes alike; during a canary it includes the new version's answers.
      const group = new LambdaDeploymentGroup(this, `${route.operationId}Deployment`, {
        application,
        alias,
        role: sharedRole,
        deploymentConfig: DEPLOYMENT_CONFIGS[settings.deployment],
        alarms: [alarms.serverErrorRate],
        ignoreAlarmConfiguration: ignoreAlarms,
        autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
      });
      this.deploymentGroups.set(route.operationId, group);
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
