import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnRole } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { ServiceFunction } from '../../infra/constructs/service-function';
import type { EnvironmentName } from '../../infra/environments';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../lib/observability/names';
import { type SynthesizedResource, synthesizeForThisFile } from './synth';

/** Issue 18, observability: X-Ray active tracing and the Powertools settings on every function of the service. */

const ENVIRONMENTS: EnvironmentName[] = ['dev', 'prod'];
const synth = synthesizeForThisFile(ENVIRONMENTS);

const XRAY_ACTIONS = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];

interface Deployed {
  path: string;
  fn: SynthesizedResource;
  role: SynthesizedResource;
  roleId: string;
  stack: Stack;
}

/** Every ServiceFunction of the environment (routes, maintenance, import worker, migrations, ...) as synthesized. */
function serviceFunctions(environment: EnvironmentName): Deployed[] {
  const templates = new Map<Stack, Record<string, SynthesizedResource>>();
  const resourcesOf = (stack: Stack) => {
    let resources = templates.get(stack);
    if (!resources) {
      resources = Template.fromStack(stack).toJSON().Resources as Record<string, SynthesizedResource>;
      templates.set(stack, resources);
    }
    return resources;
  };
  return synth.stacks[environment].node
    .findAll()
    .filter((construct): construct is ServiceFunction => construct instanceof ServiceFunction)
    .map((construct) => {
      const stack = Stack.of(construct);
      const fnId = stack.getLogicalId(construct.function.node.defaultChild as CfnFunction);
      const roleId = stack.getLogicalId(construct.role.node.defaultChild as CfnRole);
      return {
        path: construct.node.path,
        fn: resourcesOf(stack)[fnId]!,
        role: resourcesOf(stack)[roleId]!,
        roleId,
        stack,
      };
    });
}

const statementsOf = (role: SynthesizedResource): any[] =>
  (role.Properties.Policies ?? []).flatMap((policy: any) => policy.PolicyDocument.Statement);

describe.each(ENVIRONMENTS)('observability (%s)', (environment) => {
  it('covers the route functions and the maintenance, import worker and migration functions', () => {
    const paths = serviceFunctions(environment).map((deployed) => deployed.path);
    for (const name of ['Maintenance', 'ImportWorker', 'Migrate'])
      expect(
        paths.some((path) => path.split('/').includes(name)),
        name,
      ).toBe(true);
    // The quick synth's two routes.
    expect(paths.filter((path) => /login|getprofile/i.test(path)).length).toBeGreaterThanOrEqual(2);
    for (const deployed of serviceFunctions(environment)) {
      expect(deployed.fn, deployed.path).toBeDefined();
      expect(deployed.role, deployed.path).toBeDefined();
    }
  });

  it('runs every function with active X-Ray tracing', () => {
    for (const { path, fn } of serviceFunctions(environment))
      expect(fn.Properties.TracingConfig, path).toEqual({ Mode: 'Active' });
    // Every traced function of the stack is one of the service's (no function of ours is left out).
    const traced = synth
      .resourcesOf(environment, 'AWS::Lambda::Function')
      .filter(([, fn]) => fn.Properties.TracingConfig?.Mode === 'Active');
    expect(traced).toHaveLength(serviceFunctions(environment).length);
  });

  it('lets each role write trace segments, in its one inline policy, and nothing else on Resource *', () => {
    for (const { path, role, roleId } of serviceFunctions(environment)) {
      const statements = statementsOf(role);
      const xray = statements.filter((statement) =>
        [statement.Action].flat().some((a: string) => a.startsWith('xray:')),
      );
      expect(xray, path).toEqual([{ Effect: 'Allow', Action: XRAY_ACTIONS, Resource: '*' }]); // CDK sorts actions
      // Only the X-Ray statement is on Resource * (the ENI actions are in the shared managed policy).
      expect(
        statements.filter((statement) => [statement.Resource].flat().includes('*')),
        path,
      ).toEqual(xray);
      // No separate AWS::IAM::Policy with X-Ray actions (what `tracing: Tracing.ACTIVE` would have added).
      const separate = synth
        .resourcesOf(environment, 'AWS::IAM::Policy')
        .filter(([, policy]) => JSON.stringify(policy.Properties.Roles ?? []).includes(`"${roleId}"`))
        .filter(([, policy]) => JSON.stringify(policy.Properties.PolicyDocument).includes('xray:'));
      expect(separate, path).toEqual([]);
    }
  });

  it('gives every function the Powertools settings: namespace, service, environment, no response or error in traces', () => {
    for (const { path, fn } of serviceFunctions(environment)) {
      expect(fn.Properties.Environment.Variables, path).toMatchObject({
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        SERVICE_ENVIRONMENT: environment,
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        POWERTOOLS_TRACER_CAPTURE_ERROR: 'false',
      });
      // Metrics and tracing are switched on by Lambda itself (AWS_LAMBDA_RUNTIME_API, AWS_XRAY_DAEMON_ADDRESS).
      expect(fn.Properties.Environment.Variables.POWERTOOLS_METRICS_DISABLED, path).toBeUndefined();
      expect(fn.Properties.Environment.Variables.POWERTOOLS_TRACE_ENABLED, path).toBeUndefined();
    }
    expect(METRICS_NAMESPACE).toBe('CaseEvidence');
  });
});
