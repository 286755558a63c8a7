import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type App, type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import { buildApp, cdkJsonContext } from '../../infra/build-app';
import { bundleBudgetBytes, REPOSITORY_ROOT } from '../../infra/bundling';
import {
  type Bundle,
  bundleOf,
  forbiddenSources,
  isolateBundle,
  readBundleText,
  runBundle,
} from '../../infra/bundle-report';
import { environments } from '../../infra/environments';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import type { ServiceFunction } from '../../infra/constructs/service-function';
import type { CaseEvidenceStack } from '../../infra/stack';
import type { RouteDefinition } from '../../lib/http/route';
import { resourcesOfFunction, SYNTH_TIMEOUT_MS } from './synth';

/**
 * One synth of the real app (dev and prod, every route of the route table, real esbuild bundles,
 * cdk-nag as the CLI runs it), shared by every assertion below. Offline: no AWS credentials.
 */

let outdir: string;
let app: App;
let dev: CaseEvidenceStack;
let prod: CaseEvidenceStack;
/** Parent template and every nested template, per environment. */
const templates = new Map<CaseEvidenceStack, Template[]>();

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'cebs-synth-'));
  const built = buildApp({
    environmentNames: ['dev', 'prod'],
    outdir,
    context: { ...cdkJsonContext(), region: 'us-east-1' },
  });
  app = built.app;
  [dev, prod] = built.stacks as [CaseEvidenceStack, CaseEvidenceStack];
  app.synth();
  for (const stack of [dev, prod])
    templates.set(
      stack,
      [stack, ...stack.routeStacks].map((s) => Template.fromStack(s)),
    );
}, SYNTH_TIMEOUT_MS);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

const resourcesOf = (stack: CaseEvidenceStack, type: string) =>
  templates
    .get(stack)!
    .flatMap(
      (template) =>
        Object.entries(template.findResources(type)) as Array<
          [string, { Properties: Record<string, any>; [key: string]: any }]
        >,
    );

const routeFunction = (stack: CaseEvidenceStack, route: RouteDefinition) => {
  const deployed = stack.functions.find((f) => f.route === route);
  if (!deployed) throw new Error(`no function for ${route.operationId}`);
  return resourcesOfFunction(deployed);
};

/** The role's S3 grants: action -> object ARNs, sorted (however CDK merges the statements). */
const s3GrantsOf = (role: Parameters<typeof statementsOf>[0]) => {
  const grants: Record<string, string[]> = {};
  for (const { actions, resources } of statementsOf(role))
    for (const action of actions.filter((a) => a.startsWith('s3:')))
      grants[action] = [...(grants[action] ?? []), ...resources].sort();
  return grants;
};

/** Actions of every statement of the role's inline policy, with their resources. */
const statementsOf = (role: { Properties: { Policies?: Array<{ PolicyDocument: { Statement: any[] } }> } }) =>
  (role.Properties.Policies ?? [])
    .flatMap((policy) => policy.PolicyDocument.Statement)
    .map((s) => ({ actions: [s.Action].flat() as string[], resources: [s.Resource].flat() }));

describe('the synthesized stack', () => {
  it('has one arm64 Node 24 function per route of the route table, sized by the route entry', () => {
    for (const stack of [dev, prod]) {
      const functions = resourcesOf(stack, 'AWS::Lambda::Function');
      const routeFunctions = functions.filter(([, fn]) =>
        routeList.some((route) => fn.Properties.Description?.startsWith(`${route.method} ${route.path}:`)),
      );
      expect(routeFunctions).toHaveLength(routeList.length);
      expect(functions).toHaveLength(routeList.length + 4); // + maintenance, migrations, import worker, mail events
      for (const route of routeList) {
        const { fn } = routeFunction(stack, route);
        expect(fn.Properties).toMatchObject({
          Runtime: 'nodejs24.x',
          Architectures: ['arm64'],
          Handler: 'index.handler',
          MemorySize: route.lambda?.memoryMb ?? stack.settings.lambda.memoryMb,
          Timeout: route.lambda?.timeoutSeconds ?? stack.settings.lambda.timeoutSeconds,
        });
        expect(fn.Properties.ReservedConcurrentExecutions).toBe(route.lambda?.reservedConcurrency);
        expect(fn.Properties.VpcConfig.SubnetIds).toHaveLength(2);
        expect(fn.Properties.Environment.Variables).toMatchObject({
          MAIL_TRANSPORT: 'ses',
          DB_POOL_MAX: '2',
          DATABASE_PORT: '5432',
          DATABASE_NAME: 'cebs',
        });
        // Statements stop 2 s before the function does, so a slow database answers 503 in our envelope.
        const timeoutSeconds = route.lambda?.timeoutSeconds ?? stack.settings.lambda.timeoutSeconds;
        expect(Number(fn.Properties.Environment.Variables.DB_STATEMENT_TIMEOUT_MS)).toBe((timeoutSeconds - 2) * 1000);
        expect(fn.Properties.Environment.Variables.DATABASE_URL).toBeUndefined();
      }
    }
  });

  it('routes every entry through one HTTP API with its own throttle, a default throttle, access logs and CORS', () => {
    for (const stack of [dev, prod]) {
      const routes = resourcesOf(stack, 'AWS::ApiGatewayV2::Route').map(([, route]) => route.Properties.RouteKey);
      expect(routes.sort()).toEqual(routeList.map((route) => `${route.method} ${route.path}`).sort());
      const [[, stage]] = resourcesOf(stack, 'AWS::ApiGatewayV2::Stage') as [[string, any]];
      expect(stage.Properties.StageName).toBe('$default');
      expect(stage.Properties.DefaultRouteSettings).toEqual({
        ThrottlingRateLimit: 50,
        ThrottlingBurstLimit: 100,
        DetailedMetricsEnabled: true,
      });
      for (const route of routeList) {
        expect(stage.Properties.RouteSettings[`${route.method} ${route.path}`], route.operationId).toEqual({
          ThrottlingRateLimit: route.throttle.rate,
          ThrottlingBurstLimit: route.throttle.burst,
          DetailedMetricsEnabled: true,
        });
      }
      // The contract's 10/min and 3/min routes.
      expect(stage.Properties.RouteSettings['POST /auth/check-email-availability']).toMatchObject({
        ThrottlingRateLimit: 10 / 60,
        ThrottlingBurstLimit: 10,
      });
      expect(stage.Properties.RouteSettings['POST /user/resend-verification-email']).toMatchObject({
        ThrottlingRateLimit: 3 / 60,
        ThrottlingBurstLimit: 3,
      });
      expect(stage.Properties.AccessLogSettings.DestinationArn).toBeDefined();
      expect(JSON.parse(stage.Properties.AccessLogSettings.Format)).toMatchObject({
        requestId: '$context.requestId',
        status: '$context.status',
      });
      // Route settings name routes by key: the stage is updated after every route stack.
      expect(stage.DependsOn).toEqual(
        expect.arrayContaining(stack.routeStacks.map((s) => stack.getLogicalId(s.nestedStackResource!))),
      );
      const [[, api]] = resourcesOf(stack, 'AWS::ApiGatewayV2::Api') as [[string, any]];
      expect(api.Properties.CorsConfiguration).toMatchObject({
        AllowOrigins: stack.settings.corsOrigins,
        ExposeHeaders: ['X-Request-Id', 'Retry-After', 'Idempotent-Replayed'],
      });
      for (const [, integration] of resourcesOf(stack, 'AWS::ApiGatewayV2::Integration'))
        expect(integration.Properties.PayloadFormatVersion).toBe('2.0');
    }
  });

  it('keeps every nested stack well under the 500-resource limit', () => {
    for (const stack of [dev, prod])
      for (const template of templates.get(stack)!)
        expect(Object.keys(template.toJSON().Resources).length).toBeLessThan(450);
  });

  it('puts PostgreSQL in isolated subnets behind an RDS Proxy that requires TLS', () => {
    for (const stack of [dev, prod]) {
      const [parent] = templates.get(stack)!;
      parent!.resourceCountIs('AWS::RDS::DBProxy', 1);
      parent!.hasResourceProperties('AWS::RDS::DBProxy', {
        EngineFamily: 'POSTGRESQL',
        RequireTLS: true,
        Auth: Match.arrayWith([Match.objectLike({ AuthScheme: 'SECRETS' })]),
      });
      parent!.hasResourceProperties('AWS::RDS::DBInstance', {
        Engine: 'postgres',
        StorageEncrypted: true,
        PubliclyAccessible: false,
        MultiAZ: stack.settings.database.multiAz,
      });
      for (const route of routeList) {
        const { fn } = routeFunction(stack, route);
        // DATABASE_HOST is the proxy's endpoint, passed into the nested stack.
        expect(JSON.stringify(fn.Properties.Environment.Variables.DATABASE_HOST)).toMatch(/Proxy.*Endpoint/);
      }
    }
    const [prodParent] = templates.get(prod)!;
    prodParent!.hasResource('AWS::RDS::DBInstance', {
      DeletionPolicy: 'RetainExceptOnCreate',
      Properties: Match.objectLike({ DeletionProtection: true, MultiAZ: true }),
    });
    const [devParent] = templates.get(dev)!;
    devParent!.hasResource('AWS::RDS::DBInstance', { DeletionPolicy: 'Delete' });
  });

  it('stores objects in a private, encrypted, versioned bucket that refuses plain HTTP', () => {
    for (const stack of [dev, prod]) {
      const [parent] = templates.get(stack)!;
      const bucketId = stack.getLogicalId(stack.bucket.node.defaultChild as never);
      const bucket = parent!.toJSON().Resources[bucketId];
      expect(
        bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault
          .SSEAlgorithm,
      ).toBe('aws:kms');
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: 'Enabled' });
      expect(bucket.Properties.LoggingConfiguration).toBeDefined();
      expect(bucket.DeletionPolicy).toBe(stack.settings.retainData ? 'RetainExceptOnCreate' : 'Delete');
      parent!.hasResourceProperties('AWS::S3::BucketPolicy', {
        Bucket: { Ref: bucketId },
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });

  it('grants no wildcard IAM action anywhere', () => {
    for (const stack of [dev, prod]) {
      const documents = [
        ...resourcesOf(stack, 'AWS::IAM::Role').flatMap(([, role]) =>
          (role.Properties.Policies ?? []).map((p: any) => p.PolicyDocument),
        ),
        ...resourcesOf(stack, 'AWS::IAM::Policy').map(([, policy]) => policy.Properties.PolicyDocument),
        ...resourcesOf(stack, 'AWS::IAM::ManagedPolicy').map(([, policy]) => policy.Properties.PolicyDocument),
        ...resourcesOf(stack, 'AWS::S3::BucketPolicy').map(([, policy]) => policy.Properties.PolicyDocument),
      ];
      expect(documents.length).toBeGreaterThan(routeList.length);
      const actions = documents.flatMap((document) =>
        document.Statement.filter((s: any) => s.Effect === 'Allow').flatMap((s: any) => [s.Action].flat()),
      );
      expect(actions.filter((action: string) => action.includes('*'))).toEqual([]);
    }
  });

  it('gives each function only the secrets and SES/S3 actions its code can reach', () => {
    const secretNames = (role: any) =>
      statementsOf(role)
        .filter((s) => s.actions.includes('secretsmanager:GetSecretValue'))
        .flatMap((s) => s.resources.map((r: any) => JSON.stringify(r)));
    const actionsOf = (role: any) =>
      statementsOf(role)
        .flatMap((s) => s.actions)
        .sort();

    // Every route may store an answer over Lambda's payload limit under answers/ (issue 32).
    const answers = `arn:aws:s3:::case-evidence-dev-work-111111111111-us-east-1/answers/*`;
    const login = routeFunction(dev, routeList.find((r) => r.operationId === 'login')!);
    expect(actionsOf(login.role)).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      's3:GetObject',
      's3:PutObject',
      'secretsmanager:GetSecretValue',
      'xray:PutTelemetryRecords',
      'xray:PutTraceSegments',
    ]);
    expect(s3GrantsOf(login.role)).toEqual({ 's3:GetObject': [answers], 's3:PutObject': [answers] });
    expect(secretNames(login.role).join()).toMatch(/AppDatabaseCredentials.*JwtSigningKey/);
    expect(secretNames(login.role).join()).not.toMatch(/Stripe/);
    expect(login.fn.Properties.Environment.Variables.STRIPE_SECRET_ARN).toBeUndefined();
    expect(login.fn.Properties.Environment.Variables.WORK_BUCKET).toBe('case-evidence-dev-work-111111111111-us-east-1');

    const register = routeFunction(dev, routeList.find((r) => r.operationId === 'register')!);
    expect(actionsOf(register.role)).toContain('ses:SendEmail');
    expect(secretNames(register.role).join()).toMatch(/Stripe/);
    const ses = statementsOf(register.role).find((s) => s.actions.includes('ses:SendEmail'))!;
    expect(ses.resources[0]).toEqual(
      `arn:aws:ses:us-east-1:${environments.dev.account}:identity/${environments.dev.mail.domain}`,
    );
    // and the configuration set (test/infra/mail.test.ts)
    expect(JSON.stringify(ses.resources.slice(1))).toMatch(/:configuration-set\//);

    const report = routeList.find((r) => r.operationId === 'createBillingReport');
    if (report) {
      const { role, fn } = routeFunction(dev, report);
      const s3 = statementsOf(role).filter((s) => s.actions.some((a) => a.startsWith('s3:')));
      expect(s3.flatMap((s) => s.actions).sort()).toEqual(['s3:GetObject', 's3:PutObject']);
      const generated = `arn:aws:s3:::case-evidence-dev-work-111111111111-us-east-1/generated/*`;
      expect(s3GrantsOf(role)).toEqual({ 's3:GetObject': [answers, generated], 's3:PutObject': [answers, generated] });
      expect(fn.Properties.Environment.Variables.STORAGE_BUCKET).toBe(
        'case-evidence-dev-objects-111111111111-us-east-1',
      );
      expect(fn.Properties.Environment.Variables.WORK_BUCKET).toBe('case-evidence-dev-work-111111111111-us-east-1');
    }

    // Upload links put files into the work bucket's staging/ (test/infra/object-buckets.test.ts):
    // device-note import copies its attachments out of there into the case's evidence.
    const evidenceObjects = (prefix: string) => [
      `arn:aws:s3:::case-evidence-dev-objects-111111111111-us-east-1/${prefix}*`,
    ];
    const workObjects = (prefix: string) => [`arn:aws:s3:::case-evidence-dev-work-111111111111-us-east-1/${prefix}*`];
    /** The role's S3 grants, action -> object ARNs (however CDK merges the statements). */
    const s3Of = (operationId: string) => {
      const { role } = routeFunction(dev, routeList.find((r) => r.operationId === operationId)!);
      const grants = s3GrantsOf(role);
      // The answers/ grant every route has (above), left out of the comparisons below.
      for (const action of ['s3:GetObject', 's3:PutObject']) {
        expect(grants[action], `${operationId} ${action}`).toContain(answers);
        grants[action] = grants[action]!.filter((resource) => resource !== answers);
        if (grants[action]!.length === 0) delete grants[action];
      }
      return grants;
    };
    expect(s3Of('importCaseNotes')).toEqual({
      's3:GetObject': workObjects('staging/'),
      's3:PutObject': evidenceObjects('cases/'),
      's3:DeleteObject': workObjects('staging/'),
    });
    // Its upload links are presigned PUTs: the signing role may put objects there, nothing else.
    expect(s3Of('createAttachmentUploads')).toEqual({ 's3:PutObject': workObjects('staging/') });

    // Imports: the upload link is a presigned PUT (or a multipart upload, its parts presigned
    // UploadParts), start checks the upload (listing and completing one in parts), cancel aborts
    // one in parts (and the worker's copy into evidence, paused midway), retry touches no object.
    expect(s3Of('createImport')).toEqual({ 's3:PutObject': workObjects('staging/') });
    expect(s3Of('startImport')).toEqual({
      's3:GetObject': workObjects('staging/'),
      's3:PutObject': workObjects('staging/'),
      's3:ListMultipartUploadParts': workObjects('staging/'),
    });
    expect(s3Of('signImportParts')).toEqual({ 's3:PutObject': workObjects('staging/') });
    expect(s3Of('listImportParts')).toEqual({ 's3:ListMultipartUploadParts': workObjects('staging/') });
    expect(s3Of('cancelImport')).toEqual({
      's3:DeleteObject': workObjects('staging/'),
      's3:AbortMultipartUpload': [...evidenceObjects('cases/'), ...workObjects('staging/')],
    });
    for (const operationId of ['retryImport', 'listImports', 'getImport']) expect(s3Of(operationId)).toEqual({});
    // Maintenance removes unstarted uploads and expired generated documents, nothing else.
    const maintenance = resourcesOfFunction(dev.functions.find((f) => f.name === 'maintenance')!);
    expect(s3GrantsOf(maintenance.role)).toEqual({
      's3:DeleteObject': [...workObjects('generated/'), ...workObjects('staging/')],
      's3:AbortMultipartUpload': workObjects('staging/'),
    });

    // Every function: SES iff its bundle holds the SES transport, Stripe iff it holds the processor.
    for (const deployed of dev.functions) {
      const actions = statementsOf(resourcesOfFunction(deployed).role).flatMap((s) => s.actions);
      const sources = deployed.construct.bundleSources();
      expect(actions.includes('ses:SendEmail'), deployed.name).toBe(sources.includes('lib/mail/transport.ts'));
      expect(deployed.permissions.payments, deployed.name).toBe(
        sources.some((s) => s.startsWith('node_modules/stripe/')),
      );
    }
  });

  it('runs the drizzle migrations on deploy, before the functions change, and maintenance on a schedule', () => {
    for (const stack of [dev, prod]) {
      const [parent] = templates.get(stack)!;
      const migrations = parent!.findResources('Custom::DrizzleMigrations');
      const [[migrationId, migration]] = Object.entries(migrations) as [[string, any]];
      expect(migration.Properties.migrationsHash).toMatch(/^[0-9a-f]{64}$/);
      const nested = parent!.findResources('AWS::CloudFormation::Stack');
      for (const resource of Object.values(nested) as any[]) expect(resource.DependsOn).toContain(migrationId);
      parent!.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: `rate(${stack.settings.maintenanceEveryMinutes} minute${stack.settings.maintenanceEveryMinutes === 1 ? '' : 's'})`,
      });
    }
    const bundle = bundleOf('migrate', dev.node.findChild('Migrate') as ServiceFunction);
    expect(existsSync(join(bundle.directory, 'drizzle', 'meta', '_journal.json'))).toBe(true);
  });

  it('queues imports for a worker function: encrypted TLS-only queues, a dead-letter queue after three receives, one message per 15-minute invocation', () => {
    for (const stack of [dev, prod]) {
      const [parent] = templates.get(stack)!;
      const resources = parent!.toJSON().Resources;
      const idOf = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
      const queueId = idOf(stack.importQueue.queue);
      const deadLettersId = idOf(stack.importQueue.deadLetterQueue);
      const worker = stack.importWorker.function;
      const workerId = stack.getLogicalId(worker.function.node.defaultChild as CfnElement);

      // Queues: the visibility timeout covers six worker timeouts (AWS's guidance for Lambda event sources).
      expect(resourcesOf(stack, 'AWS::SQS::Queue')).toHaveLength(4); // + MaintenanceFailures, MailEventsFailures (test/infra/alarms.test.ts, mail.test.ts)
      expect(resources[queueId].Properties).toMatchObject({
        SqsManagedSseEnabled: true,
        VisibilityTimeout: 6 * 900,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [deadLettersId, 'Arn'] }, maxReceiveCount: 3 },
      });
      expect(resources[deadLettersId].Properties).toMatchObject({
        SqsManagedSseEnabled: true,
        MessageRetentionPeriod: 14 * 24 * 3600,
      });
      for (const id of [queueId, deadLettersId]) {
        expect(resources[id].DeletionPolicy).toBe(stack.settings.retainData ? 'Retain' : 'Delete');
        parent!.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: id }],
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            ]),
          },
        });
      }

      // The worker: 15 minutes, its own memory, modest reserved concurrency, in the VPC like the others.
      const fn = resources[workerId];
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Timeout: 900,
        MemorySize: stack.settings.imports.workerMemoryMb,
        ReservedConcurrentExecutions: stack.settings.imports.workerConcurrency,
      });
      expect(fn.Properties.MemorySize).not.toBe(stack.settings.lambda.memoryMb);
      expect(stack.settings.imports.workerConcurrency).toBeLessThanOrEqual(5);
      expect(fn.Properties.VpcConfig.SubnetIds).toHaveLength(2);
      expect(fn.Properties.Environment.Variables).toMatchObject({
        IMPORT_QUEUE_URL: { Ref: queueId },
        STORAGE_BUCKET: `case-evidence-${stack.settings.name}-objects-${stack.settings.account}-us-east-1`,
        WORK_BUCKET: `case-evidence-${stack.settings.name}-work-${stack.settings.account}-us-east-1`,
        DB_STATEMENT_TIMEOUT_MS: '60000',
      });
      // The young-generation cap the import benchmark's memory figure was measured with.
      expect(fn.Properties.Environment.Variables.NODE_OPTIONS).toContain('--max-semi-space-size=16');

      // One message per invocation, failures reported per message, never more pollers than may run.
      const mappings = resourcesOf(stack, 'AWS::Lambda::EventSourceMapping');
      expect(mappings).toHaveLength(1);
      expect(mappings[0]![1].Properties).toMatchObject({
        FunctionName: { Ref: workerId },
        EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
        BatchSize: 1,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: stack.settings.imports.workerConcurrency },
      });
    }
  });

  it('lets only the start, retry and cancel routes, the custody export start, tagging, maintenance and the worker send to the import queue, and tells only them its URL', () => {
    const senders = new Set([
      'startImport',
      'retryImport',
      'cancelImport',
      'startCustodyExport',
      'tagEvidence',
      'maintenance',
      'importWorker',
    ]);
    for (const stack of [dev, prod]) {
      const queueArn = stack.resolve(stack.importQueue.queue.queueArn);
      const withSend: string[] = [];
      for (const deployed of stack.functions) {
        const { fn, role } = resourcesOfFunction(deployed);
        const sends = statementsOf(role).filter((s) => s.actions.includes('sqs:SendMessage'));
        const url = fn.Properties.Environment.Variables.IMPORT_QUEUE_URL;
        expect(url !== undefined, deployed.name).toBe(senders.has(deployed.name));
        if (sends.length === 0) continue;
        withSend.push(deployed.name);
        expect(sends.flatMap((s) => s.actions)).toEqual(['sqs:SendMessage']);
        // Route functions live in nested stacks: the queue's ARN arrives as a parameter of theirs.
        const resource = sends[0]!.resources[0];
        if (Stack.of(deployed.construct) === stack) expect(resource).toEqual(queueArn);
        else expect(JSON.stringify(resource)).toMatch(/ImportsArn|referencetoCaseEvidence.*Imports/);
      }
      expect(withSend.sort()).toEqual([...senders].sort());
      expect(
        stack.functions
          .filter((f) => f.route && withSend.includes(f.name))
          .map((f) => f.route!.operationId)
          .sort(),
      ).toEqual(['cancelImport', 'retryImport', 'startCustodyExport', 'startImport', 'tagEvidence']);
    }

    // The worker copies uploads out of staging/ into cases/ (UploadPartCopy for a large one) and
    // removes them from staging, reads that copy by its version and stores attachments under cases/
    // (aborting a failed multipart upload), stores custody PDF volumes under generated/ (reusing
    // one already there), consumes its queue and nothing else.
    const worker = resourcesOfFunction(dev.functions.find((f) => f.name === 'importWorker')!);
    const cases = 'arn:aws:s3:::case-evidence-dev-objects-111111111111-us-east-1/cases/*';
    const generated = 'arn:aws:s3:::case-evidence-dev-work-111111111111-us-east-1/generated/*';
    const staging = 'arn:aws:s3:::case-evidence-dev-work-111111111111-us-east-1/staging/*';
    expect(s3GrantsOf(worker.role)).toEqual({
      's3:GetObject': [cases, generated, staging],
      's3:GetObjectVersion': [cases],
      's3:PutObject': [cases, generated],
      's3:DeleteObject': [staging],
      's3:AbortMultipartUpload': [cases],
    });
    const [parent] = templates.get(dev)!;
    const consume = Object.values(parent!.findResources('AWS::IAM::Policy')).filter((policy: any) =>
      policy.Properties.Roles.some(
        (role: any) => role.Ref === dev.getLogicalId(dev.importWorker.function.role.node.defaultChild as CfnElement),
      ),
    ) as any[];
    expect(consume).toHaveLength(1);
    const consumeStatements = consume[0].Properties.PolicyDocument.Statement;
    expect(consumeStatements.flatMap((s: any) => [s.Action].flat()).sort()).toEqual([
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ]);
    expect(consumeStatements.map((s: any) => s.Resource)).toEqual([dev.resolve(dev.importQueue.queue.queueArn)]);
  });

  it('alarms on import messages in the dead-letter queue and on import worker errors, through the alarm topic', () => {
    for (const stack of [dev, prod]) {
      const [parent] = templates.get(stack)!;
      const topic = stack.resolve((stack.alarmTopic as any).topicArn);
      const alarms = Object.values(parent!.findResources('AWS::CloudWatch::Alarm')).map((a: any) => a.Properties);
      const deadLetters = alarms.find(
        (a) =>
          a.MetricName === 'ApproximateNumberOfMessagesVisible' &&
          JSON.stringify(a.Dimensions).includes(
            stack.getLogicalId(stack.importQueue.deadLetterQueue.node.defaultChild as CfnElement),
          ),
      );
      expect(deadLetters).toMatchObject({
        Namespace: 'AWS/SQS',
        Dimensions: [
          {
            Name: 'QueueName',
            Value: stack.resolve(stack.importQueue.deadLetterQueue.queueName),
          },
        ],
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        AlarmActions: [topic],
        OKActions: [topic],
      });
      const errors = alarms.find((a) => a.AlarmDescription?.startsWith('importWorker: an import run failed'));
      expect(errors).toMatchObject({ Threshold: 1, AlarmActions: [topic], OKActions: [topic] });
      const metrics = errors.Metrics.filter((m: any) => m.MetricStat).map((m: any) => m.MetricStat.Metric);
      expect(metrics).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            Namespace: 'AWS/Lambda',
            MetricName: 'Errors',
            Dimensions: [
              { Name: 'FunctionName', Value: stack.resolve(stack.importWorker.function.function.functionName) },
            ],
          }),
          expect.objectContaining({
            Namespace: 'CaseEvidence',
            MetricName: `ImportWorkerErrors-${stack.settings.name}`,
          }),
        ]),
      );
      parent!.hasResourceProperties('AWS::Logs::MetricFilter', {
        LogGroupName: stack.resolve(stack.importWorker.function.logGroup.logGroupName),
        FilterPattern: '{ $.level = "ERROR" }',
      });
    }
  });

  it('alarms on 5xx rate, throttles and p99 latency of every route', () => {
    for (const stack of [dev, prod]) {
      const alarms = resourcesOf(stack, 'AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
      expect(alarms).toHaveLength(routeList.length * 3 + 2 + 3 + 7 + 2); // + import worker 2, maintenance 3, database and proxy 7, mail events 2
      for (const route of routeList) {
        const mine = alarms.filter((alarm) => alarm.AlarmDescription.startsWith(`${route.operationId} (`));
        expect(mine.map((alarm) => alarm.MetricName ?? 'math').sort(), route.operationId).toEqual([
          'Latency',
          'Throttles',
          'math',
        ]);
        const latency = mine.find((alarm) => alarm.MetricName === 'Latency')!;
        expect(latency.Dimensions).toEqual(
          expect.arrayContaining([
            { Name: 'Resource', Value: route.path },
            { Name: 'Method', Value: route.method },
          ]),
        );
        expect(latency.ExtendedStatistic).toBe('p99');
        expect(latency.AlarmActions).toHaveLength(1);
      }
    }
  });

  it('passes cdk-nag (AwsSolutions) with a reason on every acknowledgment', () => {
    for (const stack of [dev, prod]) {
      const report = new AwsSolutionsChecks().validateScope(stack);
      expect(
        report.violations
          .filter((v) => v.severity === 'error')
          .map((v) => `${v.ruleName} ${v.violatingResources.map((r) => r.constructPath).join()}`),
      ).toEqual([]);
    }
    const reasons: Array<[string, string]> = [];
    const walk = (node: IConstruct) => {
      for (const entry of node.node.metadata) {
        if (entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
          for (const [id, reason] of Object.entries(entry.data as Record<string, string>)) reasons.push([id, reason]);
      }
      node.node.children.forEach(walk);
    };
    walk(app);
    expect(reasons.length).toBeGreaterThan(0);
    for (const [id, reason] of reasons) expect(reason.length, id).toBeGreaterThan(40);
  });
});

describe('the Lambda bundles', () => {
  let bundles: Array<{ bundle: Bundle; route?: RouteDefinition }>;
  beforeAll(() => {
    bundles = dev.functions.map((deployed) => ({
      bundle: bundleOf(deployed.name, deployed.construct),
      ...(deployed.route ? { route: deployed.route } : {}),
    }));
  });

  it('contain no PGlite, local server, sandbox processor or other local-only code', () => {
    for (const { bundle } of bundles) {
      expect(forbiddenSources(bundle), bundle.name).toEqual([]);
      expect(bundle.sources.length, bundle.name).toBeGreaterThan(0);
    }
    // The lazy imports that would pull them in stay in the code, as external imports.
    const login = bundles.find((b) => b.bundle.name === 'login')!.bundle;
    expect(login.sources).toContain('lib/db/client.ts');
    expect(readBundleText(login)).toContain('"@electric-sql/pglite"');
    // The check knows the shapes these modules take in a source map.
    const leaked = [
      'node_modules/@electric-sql/pglite/src/base.ts',
      'node_modules/src/pglite/driver.ts',
      'lib/billing/processor/sandbox.ts',
      'infra/local/server.ts',
    ];
    expect(forbiddenSources({ ...login, sources: leaked })).toEqual(leaked);
  });

  it('stay within the size budget: none over 1.5 MB, the import worker (off any request path) under 4 MB', () => {
    for (const { bundle } of bundles) expect(bundle.bytes, bundle.name).toBeLessThan(bundleBudgetBytes(bundle.name));
    expect(bundleBudgetBytes('startImport')).toBe(1.5 * 1024 * 1024);
  });

  it('load in a fresh Node process outside the repository and answer a request through the whole middleware chain', async () => {
    const environment = {
      // Never connected: every request below is answered before the first query.
      DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none',
      JWT_SECRET: 'bundle-check-signing-key-0123456789abcdef0123',
      LOG_LEVEL: 'SILENT',
    };
    const queue = bundles.filter((b) => b.route);
    const failures: string[] = [];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const route = next.route!;
        const directory = isolateBundle(next.bundle);
        try {
          const path = route.path.replace(/\{[^}]+\}/g, 'x');
          const request = {
            method: route.method,
            url: path,
            headers: { 'content-type': 'application/json' },
            body: '{"unterminated',
          };
          const event = buildApiGatewayEvent(
            route,
            request,
            Object.fromEntries([...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => [m[1]!, 'x'])),
          );
          const run = await runBundle(
            directory,
            { ...next.bundle.environment, ...environment },
            { event, context: buildLambdaContext(route) },
          );
          const status = run.result?.statusCode;
          const body = JSON.parse(run.result?.body ?? '{}');
          // Bearer routes refuse the anonymous caller first (401). Anonymous routes reject the
          // malformed body or an unconfigured feature (4xx), or, counting a rate limit in
          // Postgres first, answer the unreachable database with the error envelope (503, never
          // 500). Either way the whole chain ran inside the bundle.
          const accepted =
            route.auth === 'bearer'
              ? status === 401
              : status !== undefined &&
                ((status >= 400 && status < 500) || (status === 503 && route.rateLimit !== undefined));
          if (!accepted || body.statusCode !== status || !body.error?.code)
            failures.push(
              `${route.operationId}: ${status} ${run.result?.body?.slice(0, 200)} ${run.stderr.slice(0, 300)}`,
            );
        } catch (error) {
          failures.push(`${route.operationId}: ${(error as Error).message.slice(0, 500)}`);
        } finally {
          rmSync(directory, { recursive: true, force: true });
        }
      }
    };
    await Promise.all([worker(), worker()]);
    expect(failures).toEqual([]);
  }, 180_000);
});

describe('the import worker bundle', () => {
  it('loads outside the repository, drops a message that names no import and reports a failed one alone', async () => {
    const bundle = bundleOf('importWorker', dev.importWorker.function);
    const directory = isolateBundle(bundle);
    try {
      const event = {
        Records: [
          { messageId: 'garbage', body: 'not json', attributes: {}, messageAttributes: {}, eventSource: 'aws:sqs' },
          { messageId: 'wrong-shape', body: '{"import":"x"}', attributes: {}, eventSource: 'aws:sqs' },
          { messageId: 'valid', body: '{"importId":"0193a1b2-0000-7000-8000-000000000001"}', eventSource: 'aws:sqs' },
        ],
      };
      const run = await runBundle(
        directory,
        {
          ...bundle.environment,
          // Never queried: postgres.js connects on the first query.
          DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none',
          // The runner gives the invocation 30 s, under the worker's 2-minute margin, so the valid
          // message is sent back to the queue, which fails here (no SDK outside Lambda's runtime).
          IMPORT_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/imports',
          DB_CONNECT_TIMEOUT_SECONDS: '1',
          JWT_SECRET: 'bundle-check-signing-key-0123456789abcdef0123',
          LOG_LEVEL: 'SILENT',
        },
        { event, context: { awsRequestId: 'bundle-check' } },
      );
      expect(run.handler).toBe('function');
      expect(run.result, run.stderr).toEqual({ batchItemFailures: [{ itemIdentifier: 'valid' }] });
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('npx cdk synth', () => {
  it('runs the app of cdk.json offline, without AWS credentials, cdk-nag included', async () => {
    const cliOut = mkdtempSync(join(tmpdir(), 'cebs-cli-synth-'));
    try {
      const environment = Object.fromEntries(
        Object.entries(process.env).filter(
          ([name]) => !name.startsWith('AWS_') && !name.startsWith('CDK_') && name !== 'NODE_OPTIONS',
        ),
      );
      // A quick subset of the routes: the full table is synthesized in-process above.
      const { status, output } = await new Promise<{ status: number | null; output: string }>((resolve) => {
        const cli = join(REPOSITORY_ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk');
        const child = spawn(
          process.execPath,
          [
            cli,
            'synth',
            '--quiet',
            '-c',
            'environment=staging',
            '-c',
            'routes=login,checkEmailAvailability',
            '-o',
            cliOut,
          ],
          {
            cwd: REPOSITORY_ROOT,
            // The project's Node 24 first, as npm scripts have it (cdk.json runs `npx tsx`).
            env: {
              ...environment,
              PATH: `${join(REPOSITORY_ROOT, 'node_modules', '.bin')}:${environment.PATH ?? ''}`,
              AWS_EC2_METADATA_DISABLED: 'true',
            },
          },
        );
        let text = '';
        child.stdout.on('data', (chunk) => (text += chunk));
        child.stderr.on('data', (chunk) => (text += chunk));
        child.on('close', (code) => resolve({ status: code, output: text }));
      });
      expect(status, output.slice(-3000)).toBe(0);
      const manifest = JSON.parse(readFileSync(join(cliOut, 'manifest.json'), 'utf8'));
      expect(Object.keys(manifest.artifacts)).toContain('CaseEvidence-staging');
      const parent = Template.fromJSON(
        JSON.parse(readFileSync(join(cliOut, 'CaseEvidence-staging.template.json'), 'utf8')),
      );
      parent.resourceCountIs('AWS::RDS::DBProxy', 1);
      parent.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        RouteSettings: {
          'POST /auth/check-email-availability': {
            ThrottlingRateLimit: 10 / 60,
            ThrottlingBurstLimit: 10,
            DetailedMetricsEnabled: true,
          },
        },
      });
      const nested = readdirSync(cliOut).filter((file) => file.endsWith('.nested.template.json'));
      expect(nested).toHaveLength(1);
      Template.fromJSON(JSON.parse(readFileSync(join(cliOut, nested[0]!), 'utf8'))).resourceCountIs(
        'AWS::Lambda::Function',
        2,
      );
    } finally {
      rmSync(cliOut, { recursive: true, force: true });
    }
  }, 120_000);
});
