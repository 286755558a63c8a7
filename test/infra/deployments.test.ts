import { type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import { buildApp, cdkJsonContext } from '../../infra/build-app';
import {
  groupRoutes,
  LIVE_ALIAS,
  MAX_ROUTES_PER_STACK,
  RESOURCES_PER_ROUTE,
  RESOURCES_PER_ROUTE_STACK,
  ROUTE_STACK_RESOURCE_BUDGET,
  type RouteStack,
} from '../../infra/constructs/route-stack';
import type { EnvironmentName } from '../../infra/environments';
import { type SynthesizedResource, synthesizeForThisFile } from './synth';

/**
 * Gradual deploys: every route function is published as a version behind a `live` alias, the API
 * invokes the alias, and CodeDeploy shifts the alias (a 10% canary for 5 minutes in prod, all at
 * once in dev), rolled back when the route's 5xx alarm fires.
 */

const ENVIRONMENTS: EnvironmentName[] = ['dev', 'prod'];
const synth = synthesizeForThisFile(ENVIRONMENTS);

const DEPLOYMENT_CONFIG: Record<EnvironmentName, string> = {
  dev: 'CodeDeployDefault.LambdaAllAtOnce',
  staging: 'CodeDeployDefault.LambdaAllAtOnce',
  prod: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
};

const idOf = (construct: { node: { defaultChild?: unknown } }) => {
  const element = construct.node.defaultChild as CfnElement;
  return Stack.of(element).getLogicalId(element);
};

/** Every route of every route stack of the environment, with its template and logical ids. */
const routesOf = (environment: EnvironmentName) =>
  synth.stacks[environment].routeStacks.flatMap((routeStack) => {
    const resources = Template.fromStack(routeStack).toJSON().Resources as Record<string, SynthesizedResource>;
    return [...routeStack.functions.keys()].map((operationId) => ({
      operationId,
      routeStack,
      resources,
      functionId: idOf(routeStack.functions.get(operationId)!.function),
      aliasId: idOf(routeStack.aliases.get(operationId)!),
      groupId: idOf(routeStack.deploymentGroups.get(operationId)!),
      alarmId: idOf(routeStack.alarms.get(operationId)!.serverErrorRate),
    }));
  });

const ofType = (resources: Record<string, SynthesizedResource>, type: string) =>
  Object.entries(resources).filter(([, resource]) => resource.Type === type);

describe('gradual deploys of route functions', () => {
  it('publishes every route function as a version behind an alias named live', () => {
    for (const environment of ENVIRONMENTS) {
      const routes = routesOf(environment);
      expect(routes.map((route) => route.operationId).sort()).toEqual(['getProfile', 'login']);
      for (const { operationId, resources, functionId, aliasId } of routes) {
        const versions = ofType(resources, 'AWS::Lambda::Version').filter(
          ([, version]) => version.Properties.FunctionName?.Ref === functionId,
        );
        expect(versions, operationId).toHaveLength(1);
        const [[versionId, version]] = versions as [[string, SynthesizedResource]];
        // Old versions are deleted after the alias moved off them (no pile-up in the code storage quota).
        expect(version.DeletionPolicy ?? 'Delete').toBe('Delete');
        const alias = resources[aliasId]!;
        expect(alias.Type).toBe('AWS::Lambda::Alias');
        expect(alias.Properties).toMatchObject({
          Name: LIVE_ALIAS,
          FunctionName: { Ref: functionId },
          FunctionVersion: { 'Fn::GetAtt': [versionId, 'Version'] },
        });
      }
    }
  });

  it('integrates the API with the alias and lets API Gateway invoke the alias only', () => {
    for (const environment of ENVIRONMENTS) {
      for (const { operationId, resources, functionId, aliasId } of routesOf(environment)) {
        const integrations = ofType(resources, 'AWS::ApiGatewayV2::Integration');
        const [[integrationId, integration]] = integrations.filter(
          ([, candidate]) => JSON.stringify(candidate.Properties.IntegrationUri) === JSON.stringify({ Ref: aliasId }),
        ) as [[string, SynthesizedResource]];
        expect(integration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
        const [[, route]] = ofType(resources, 'AWS::ApiGatewayV2::Route').filter(([, candidate]) =>
          JSON.stringify(candidate.Properties.Target).includes(integrationId),
        ) as [[string, SynthesizedResource]];
        const definition = routeList.find((entry) => entry.operationId === operationId)!;
        // Route keys (and so the stage's RouteSettings keys) are unchanged.
        expect(route.Properties.RouteKey).toBe(`${definition.method} ${definition.path}`);
        const stage = synth.resourcesOf(environment, 'AWS::ApiGatewayV2::Stage').map(([, resource]) => resource)[0]!;
        expect(stage.Properties.RouteSettings[route.Properties.RouteKey]).toMatchObject({
          ThrottlingRateLimit: definition.throttle.rate,
        });

        const permissions = ofType(resources, 'AWS::Lambda::Permission').map(([, permission]) => permission);
        const fromApiGateway = permissions.filter(
          (permission) => permission.Properties.Principal === 'apigateway.amazonaws.com',
        );
        expect(fromApiGateway.map((permission) => permission.Properties.FunctionName)).toContainEqual({
          Ref: aliasId,
        });
        // Nothing may invoke the unqualified function ($LATEST) directly.
        for (const permission of permissions)
          expect(permission.Properties.FunctionName, operationId).not.toEqual({ 'Fn::GetAtt': [functionId, 'Arn'] });
      }
    }
  });

  it('shifts each alias with its own CodeDeploy deployment group, rolled back on the route 5xx alarm', () => {
    for (const environment of ENVIRONMENTS) {
      for (const { operationId, resources, aliasId, groupId, alarmId, routeStack } of routesOf(environment)) {
        const group = resources[groupId]!;
        expect(group.Type).toBe('AWS::CodeDeploy::DeploymentGroup');
        const [[applicationId]] = ofType(resources, 'AWS::CodeDeploy::Application') as [[string, unknown]];
        expect(group.Properties).toMatchObject({
          ApplicationName: { Ref: applicationId },
          DeploymentConfigName: DEPLOYMENT_CONFIG[environment],
          DeploymentStyle: { DeploymentType: 'BLUE_GREEN', DeploymentOption: 'WITH_TRAFFIC_CONTROL' },
          AlarmConfiguration: { Enabled: true, Alarms: [{ Name: { Ref: alarmId } }] },
          AutoRollbackConfiguration: {
            Enabled: true,
            Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']),
          },
        });
        // The alarm in the group is the route's 5xx share from API Gateway's per-route metrics.
        const alarm = resources[alarmId]!;
        const definition = routeList.find((entry) => entry.operationId === operationId)!;
        const metrics = alarm.Properties.Metrics as Array<{ MetricStat?: { Metric: any } }>;
        const errors = metrics.find((metric) => metric.MetricStat?.Metric.MetricName === '5xx')!;
        expect(errors.MetricStat!.Metric.Namespace).toBe('AWS/ApiGateway');
        expect(errors.MetricStat!.Metric.Dimensions).toEqual(
          expect.arrayContaining([
            { Name: 'Method', Value: definition.method },
            { Name: 'Resource', Value: definition.path },
          ]),
        );
        // The alias update is a CodeDeploy deployment of that group; the Ref also orders the
        // group's update (alarms on or off) before the alias's.
        const alias = resources[aliasId]!;
        expect(alias.UpdatePolicy).toEqual({
          CodeDeployLambdaAliasUpdate: {
            ApplicationName: { Ref: applicationId },
            DeploymentGroupName: { Ref: groupId },
          },
        });
        // One shared service role per route stack, with the CodeDeploy for Lambda policy.
        const roleId = idOf(routeStack.node.findChild('DeploymentRole') as never);
        expect(group.Properties.ServiceRoleArn).toEqual({ 'Fn::GetAtt': [roleId, 'Arn'] });
      }
    }
  });

  it('shares one CodeDeploy application and one service role per route stack', () => {
    for (const environment of ENVIRONMENTS) {
      for (const routeStack of synth.stacks[environment].routeStacks) {
        const template = Template.fromStack(routeStack);
        template.resourceCountIs('AWS::CodeDeploy::Application', 1);
        template.resourceCountIs('AWS::CodeDeploy::DeploymentGroup', routeStack.functions.size);
        const roles = Object.values(template.findResources('AWS::IAM::Role')).filter((role) =>
          JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes('codedeploy.amazonaws.com'),
        );
        expect(roles).toHaveLength(1);
        expect(JSON.stringify(roles[0]!.Properties.ManagedPolicyArns)).toContain(
          'service-role/AWSCodeDeployRoleForLambdaLimited',
        );
        expect(roles[0]!.Properties.ManagedPolicyArns).toHaveLength(1);
      }
    }
  });

  it('counts the real resources of a route and keeps the largest route stack under 500', () => {
    for (const environment of ENVIRONMENTS) {
      for (const routeStack of synth.stacks[environment].routeStacks) {
        const count = Object.keys(Template.fromStack(routeStack).toJSON().Resources).length;
        expect(count, routeStack.node.id).toBe(
          RESOURCES_PER_ROUTE_STACK + RESOURCES_PER_ROUTE * routeStack.functions.size,
        );
      }
    }
    const largestPossible = RESOURCES_PER_ROUTE_STACK + RESOURCES_PER_ROUTE * MAX_ROUTES_PER_STACK;
    expect(largestPossible).toBeLessThanOrEqual(ROUTE_STACK_RESOURCE_BUDGET);
    expect(ROUTE_STACK_RESOURCE_BUDGET).toBeLessThanOrEqual(450);
    // Today's largest area of the route table, at the measured cost per route.
    const largestArea = Math.max(...groupRoutes(routeList).map((group) => group.routes.length));
    expect(largestArea).toBeLessThanOrEqual(MAX_ROUTES_PER_STACK);
    expect(RESOURCES_PER_ROUTE_STACK + RESOURCES_PER_ROUTE * largestArea).toBeLessThan(450);
  });
});

describe('cdk-nag', () => {
  it('has no unacknowledged finding on the versions, aliases, deployment groups and their role', () => {
    for (const environment of ENVIRONMENTS) {
      const report = new AwsSolutionsChecks().validateScope(synth.stacks[environment]);
      const ours = report.violations
        .flatMap((violation) =>
          violation.violatingResources.map((resource) => `${violation.ruleName} ${resource.constructPath}`),
        )
        .filter((finding) => /\/(Deployments|DeploymentRole|\w+Live|\w+Deployment)(\/|$)|CurrentVersion/.test(finding));
      expect(ours).toEqual([]);
    }
  });
});

describe('cdk deploy -c ignoreDeploymentAlarms=true', () => {
  it('turns the alarm check of every deployment group off (a hotfix while a route alarms)', () => {
    const { app, stacks } = buildApp({
      environmentNames: ['prod'],
      nag: false,
      // No bundling: only the deployment groups are looked at.
      context: { ...cdkJsonContext(), routes: 'login', ignoreDeploymentAlarms: 'true', 'aws:cdk:bundling-stacks': [] },
    });
    const [routeStack] = stacks[0]!.routeStacks as [RouteStack];
    const template = Template.fromStack(routeStack);
    const [group] = Object.values(template.findResources('AWS::CodeDeploy::DeploymentGroup'));
    expect(group!.Properties.AlarmConfiguration).toMatchObject({ Enabled: false });
    expect(group!.Properties.DeploymentConfigName).toBe('CodeDeployDefault.LambdaCanary10Percent5Minutes');
    expect(app.node.tryGetContext('ignoreDeploymentAlarms')).toBe('true');
  }, 120_000);
});
