import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, type AssetStaging } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc } from 'aws-cdk-lib/aws-ec2';
import { SubnetType } from 'aws-cdk-lib/aws-ec2';
import { type IManagedPolicy, PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { type CfnFunction, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { Construct } from 'constructs';
import { buildSync } from 'esbuild';
import {
  BUILTIN_ALIASES,
  CHUNK_DIRECTORY,
  LAMBDA_ARCHITECTURE,
  LAZY_ALIASES,
  LAMBDA_RUNTIME,
  LOCAL_ONLY_MODULES,
  type LambdaBundlingOptions,
  lambdaBundling,
  REPOSITORY_ROOT,
  RUNTIME_PROVIDED_MODULES,
} from '../bundling';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../lib/observability/names';
import type { EnvironmentSettings } from '../environments';
import { acknowledge } from '../nag';
import { normalizeSources } from '../permissions';
import { historyRemovalPolicy } from './retention';

export interface ServiceFunctionProps {
  /** Entry module, relative to the repository root; it exports `handler`. */
  entry: string;
  description: string;
  settings: EnvironmentSettings;
  vpc: IVpc;
  securityGroup: ISecurityGroup;
  /** ENI permissions every VPC function needs (one customer-managed policy for all). */
  networkPolicy: IManagedPolicy;
  environment: Record<string, string>;
  memoryMb?: number | undefined;
  timeoutSeconds?: number | undefined;
  reservedConcurrency?: number | undefined;
  /** Asynchronous invocations (schedules, custom resources): retries after a failure. */
  retryAttempts?: number;
  bundling?: LambdaBundlingOptions;
}

/** The longest statement a function with this timeout may run: 2 s less, and at least 1 s. */
export function statementTimeoutMs(timeoutSeconds: number): number {
  return Math.max(1_000, (timeoutSeconds - 2) * 1_000);
}

/**
 * One Lambda function of the service: a NodejsFunction (esbuild, ESM, arm64) in the private
 * subnets, its own log group and its own role with nothing in it but its log group and the VPC
 * networking policy. Callers add the secrets and service actions the function needs.
 */
export class ServiceFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  private readonly policy: PolicyDocument;

  constructor(
    scope: Construct,
    id: string,
    private readonly props: ServiceFunctionProps,
  ) {
    super(scope, id);
    const { settings } = props;
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: settings.logRetention,
      removalPolicy: historyRemovalPolicy(settings),
    });
    // One inline policy on the role (no separate AWS::IAM::Policy resource: stacks hold at most
    // 500 resources and every route costs a few).
    this.policy = new PolicyDocument({
      statements: [
        new PolicyStatement({
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [this.logGroup.logGroupArn],
        }),
        // Active X-Ray tracing (below): the actions of the AWSXRayDaemonWriteAccess policy.
        new PolicyStatement({
          actions: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
          resources: ['*'],
        }),
      ],
    });
    this.role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description} (${settings.name})`.slice(0, 1000),
      managedPolicies: [props.networkPolicy],
      inlinePolicies: { access: this.policy },
    });
    this.function = new NodejsFunction(this, 'Function', {
      entry: join(REPOSITORY_ROOT, props.entry),
      handler: 'handler',
      projectRoot: REPOSITORY_ROOT,
      depsLockFilePath: join(REPOSITORY_ROOT, 'package-lock.json'),
      runtime: LAMBDA_RUNTIME,
      architecture: LAMBDA_ARCHITECTURE,
      description: props.description.slice(0, 256),
      memorySize: props.memoryMb ?? settings.lambda.memoryMb,
      timeout: Duration.seconds(props.timeoutSeconds ?? settings.lambda.timeoutSeconds),
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
      ...(props.retryAttempts === undefined ? {} : { retryAttempts: props.retryAttempts }),
      role: this.role,
      logGroup: this.logGroup,
      vpc: props.vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_WITH_EGRESS },
      securityGroups: [props.securityGroup],
      environment: {
        ...(settings.sourceMapsAtRuntime ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
        // A statement is cut off 2 s before the function would be: the request answers 503 in our
        // envelope rather than the gateway's timeout (lib/db/client.ts).
        DB_STATEMENT_TIMEOUT_MS: String(statementTimeoutMs(props.timeoutSeconds ?? settings.lambda.timeoutSeconds)),
        // Powertools Metrics and Tracer (lib/observability): names, the `environment` dimension, and
        // traces that never carry a response or an error's message (they can hold what logs redact).
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        SERVICE_ENVIRONMENT: settings.name,
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        POWERTOOLS_TRACER_CAPTURE_ERROR: 'false',
        ...props.environment,
      },
      bundling: lambdaBundling(props.entry, props.bundling),
    });
    // Active tracing set on the resource rather than with `tracing:`, which would put the X-Ray
    // actions into a separate AWS::IAM::Policy per function; they are in the inline policy above.
    (this.function.node.defaultChild as CfnFunction).tracingConfig = { mode: Tracing.ACTIVE };
    acknowledge(
      this.role,
      'AwsSolutions-IAM5[Resource::*]',
      'xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing) support no resource-level permissions; these are the actions of the AWSXRayDaemonWriteAccess policy, and the only statement of the role on Resource::*.',
    );
  }

  addToRolePolicy(statement: PolicyStatement): void {
    this.policy.addStatements(statement);
  }

  /** Directory of the staged bundle (index.mjs and its map); undefined when bundling was skipped. */
  get bundleDirectory(): string | undefined {
    const asset = this.function.node.tryFindChild('Code') as Asset | undefined;
    const staging = asset?.node.tryFindChild('Stage') as AssetStaging | undefined;
    const directory = staging?.absoluteStagedPath;
    return directory && existsSync(join(directory, 'index.mjs.map')) ? directory : undefined;
  }

  /**
   * Repository-relative paths of every module in the bundle: from the staged bundle's source map,
   * or, when CDK skipped bundling this stack, from an esbuild dependency scan with the same
   * options (so the template does not depend on which stacks were selected).
   */
  bundleSources(): string[] {
    const directory = this.bundleDirectory;
    if (directory) {
      // index.mjs and the chunks split off it (loaded on demand, shipped all the same).
      const chunks = existsSync(join(directory, CHUNK_DIRECTORY))
        ? readdirSync(join(directory, CHUNK_DIRECTORY))
            .filter((file) => file.endsWith('.mjs.map'))
            .map((file) => join(directory, CHUNK_DIRECTORY, file))
        : [];
      return [
        ...new Set(
          [join(directory, 'index.mjs.map'), ...chunks].flatMap((file) => {
            // Already repository-relative (infra/bundling/relative-sources.mjs).
            return (JSON.parse(readFileSync(file, 'utf8')) as { sources: string[] }).sources;
          }),
        ),
      ];
    }
    const result = buildSync({
      absWorkingDir: REPOSITORY_ROOT,
      entryPoints: [this.props.entry],
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      mainFields: ['module', 'main'],
      outfile: 'scan/index.mjs',
      external: [...RUNTIME_PROVIDED_MODULES, ...LOCAL_ONLY_MODULES],
      alias: Object.fromEntries(
        [...BUILTIN_ALIASES, ...LAZY_ALIASES].map((entry) => entry.split('=') as [string, string]),
      ),
      logLevel: 'silent',
    });
    // Like the source map, only modules that contribute code after tree shaking.
    const output = Object.values(result.metafile.outputs).find((candidate) => candidate.entryPoint);
    return normalizeSources(
      REPOSITORY_ROOT,
      Object.entries(output?.inputs ?? {})
        .filter(([, input]) => input.bytesInOutput > 0)
        .map(([path]) => path),
    );
  }
}
