import { Annotations, CfnOutput, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import type { DatabaseProxy } from 'aws-cdk-lib/aws-rds';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { routeList } from '../functions/routes';
import { type ConcurrencyBudget, concurrencyBudget } from './concurrency-budget';
import type { RouteDefinition } from '../lib/http/route';
import { AlarmTopic } from './constructs/alarm-topic';
import { Api } from './constructs/api';
import { BackupJobAlerts } from './constructs/backup-alerts';
import { Backup } from './constructs/backup';
import { Database } from './constructs/database';
import { createOriginVerifySecret, Edge } from './constructs/edge';
import { DatabaseAlarms } from './constructs/database-alarms';
import { type DeployedFunction, FunctionWiring } from './constructs/function-wiring';
import { ImportQueue, ImportWorker } from './constructs/imports';
import { Mail, MailEvents } from './constructs/mail';
import { Maintenance } from './constructs/maintenance';
import { Migration } from './constructs/migration';
import { Network } from './constructs/network';
import { ObjectStore } from './constructs/object-store';
import { groupRoutes, RouteStack } from './constructs/route-stack';
import { ServiceSecrets } from './constructs/secrets';
import { ServiceFunction } from './constructs/service-function';
import type { EnvironmentSettings } from './environments';
import { acknowledgeStackFindings } from './nag';

export interface CaseEvidenceStackProps extends StackProps {
  settings: EnvironmentSettings;
  /** Defaults to every route of functions/routes.ts (tests may pass a subset). */
  routes?: readonly RouteDefinition[];
}

/**
 * The service in one environment: every route of the route table as its own Lambda function
 * behind one HTTP API, over RDS PostgreSQL behind RDS Proxy, with the evidence and work buckets, the SES
 * identity, secrets, a scheduled maintenance function, the evidence import queue and its worker,
 * a migration step and per-route alarms.
 */
export class CaseEvidenceStack extends Stack {
  readonly settings: EnvironmentSettings;
  readonly functions: DeployedFunction[];
  readonly api: Api;
  readonly edge: Edge;
  readonly alarmTopic: ITopic;
  readonly routeStacks: RouteStack[];
  readonly proxy: DatabaseProxy;
  /** The deployed routes' concurrency budget (infra/concurrency-budget.ts); synth fails on an instance class it does not know. */
  readonly concurrencyBudget: ConcurrencyBudget;
  /** The evidence bucket (Object Lock). */
  readonly bucket: Bucket;
  /** Staging uploads and generated documents (expiring, no Object Lock). */
  readonly workBucket: Bucket;
  readonly importQueue: ImportQueue;
  readonly importWorker: ImportWorker;

  constructor(scope: Construct, id: string, props: CaseEvidenceStackProps) {
    super(scope, id, { terminationProtection: props.settings.retainData, ...props });
    this.settings = props.settings;
    const settings = props.settings;
    const routes = props.routes ?? routeList;
    this.concurrencyBudget = concurrencyBudget(settings, routes);
    // The proxy's target group takes no tags in CloudFormation's schema (cfn-lint E3002), though
    // CDK's L1 would render them.
    const untaggable = { excludeResourceTypes: ['AWS::RDS::DBProxyTargetGroup'] };
    Tags.of(this).add('service', 'case-evidence-billing', untaggable);
    Tags.of(this).add('environment', settings.name, untaggable);

    const network = new Network(this, settings);
    const database = new Database(this, settings, network);
    this.proxy = database.proxy;
    const secrets = new ServiceSecrets(this, settings);
    const objectStore = new ObjectStore(this, settings);
    new Backup(this, 'Backup', { settings, database, objectStore });
    this.bucket = objectStore.bucket;
    this.workBucket = objectStore.workBucket;
    const mail = new Mail(this, settings);
    const importQueue = new ImportQueue(this, settings);
    this.importQueue = importQueue;
    const originVerify = createOriginVerifySecret(this, settings);
    const wiring = new FunctionWiring(this, {
      settings,
      network,
      database,
      secrets,
      originVerify,
      objectStore,
      mail,
      importQueue,
    });
    this.functions = wiring.functions;
    const migration = new Migration(this, { settings, database, wiring });

    // ---- API, alarm topic, and one function per route of the route table, grouped by area into
    // nested stacks (a stack holds at most 500 resources).
    this.api = new Api(this, 'Api', { settings });
    this.edge = new Edge(this, 'Edge', { settings, httpApi: this.api.httpApi, stage: this.api.stage, originVerify });
    const alarmTopic = new AlarmTopic(this, 'Alarms', settings);
    this.alarmTopic = alarmTopic.topic;
    new BackupJobAlerts(this, 'BackupAlerts', { alarmTopic });
    new DatabaseAlarms(this, 'DatabaseAlarms', {
      settings,
      instance: database.instance,
      proxy: database.proxy,
      topic: this.alarmTopic,
    });
    const createRouteFunction = (scope: Construct, route: RouteDefinition): ServiceFunction => {
      const construct = new ServiceFunction(scope, upperFirst(route.operationId), {
        ...wiring.shared,
        entry: route.handler,
        description: `${route.method} ${route.path}: ${route.summary}`,
        environment: wiring.environment,
        memoryMb: route.lambda?.memoryMb,
        timeoutSeconds: route.lambda?.timeoutSeconds,
        reservedConcurrency: route.lambda?.reservedConcurrency,
      });
      // New code runs against the new schema: functions update after the migration step.
      construct.function.node.addDependency(migration.resource);
      if ((route.lambda?.timeoutSeconds ?? 0) > 30) {
        Annotations.of(construct).addWarningV2(
          'cebs:integration-timeout',
          `${route.operationId}: Lambda timeout ${route.lambda?.timeoutSeconds} s exceeds the HTTP API integration limit of 30 s; clients get 503 after 30 s.`,
        );
      }
      wiring.wire(route.operationId, construct, route);
      return construct;
    };
    this.routeStacks = groupRoutes(routes).map(
      (group) =>
        new RouteStack(this, `Routes${upperFirst(group.area)}`, {
          settings,
          description: `Case Evidence ${settings.name}: routes of functions/${group.area.replace(/\d+$/, '')}`,
          routes: group.routes,
          httpApi: this.api.httpApi,
          stageName: this.api.stage.stageName,
          alarmTopic: this.alarmTopic,
          createFunction: createRouteFunction,
        }),
    );
    this.api.setRouteThrottles(routes, this.routeStacks);

    const maintenance = new Maintenance(this, { settings, wiring, migration, alarmTopic: this.alarmTopic });
    new MailEvents(this, { settings, wiring, migration, mail, alarmTopic: this.alarmTopic });
    this.importWorker = new ImportWorker(this, {
      settings,
      wiring,
      migration,
      objectStore,
      importQueue,
      alarmTopic: this.alarmTopic,
    });

    new CfnOutput(this, 'ApiUrl', { value: `https://${settings.edge.apiDomain}`, description: 'Base URL of the API' });
    new CfnOutput(this, 'ApiDomainCnameTarget', {
      value: this.edge.distribution.distributionDomainName,
      description: `DNS: ${settings.edge.apiDomain} CNAME (or alias) this CloudFront domain`,
    });
    new CfnOutput(this, 'OriginDomainCnameTarget', {
      value: this.edge.originDomain.regionalDomainName,
      description: `DNS: ${settings.edge.originDomain} CNAME (or alias) this API Gateway regional domain`,
    });
    new CfnOutput(this, 'ObjectBucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'WorkBucketName', {
      value: this.workBucket.bucketName,
      description: 'Staging uploads and generated documents (expire; infra/README.md)',
    });
    new CfnOutput(this, 'StripeSecretArn', {
      value: secrets.stripe.secretArn,
      description: 'Put STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET here',
    });
    new CfnOutput(this, 'MigrateFunctionName', {
      value: migration.function.function.functionName,
      description: 'Invoke to re-run migrations by hand',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn });
    new CfnOutput(this, 'ImportDeadLetterQueueUrl', {
      value: importQueue.deadLetterQueue.queueUrl,
      description: 'Import messages that failed three times (infra/README.md: redrive after fixing the cause)',
    });
    new CfnOutput(this, 'MaintenanceFailuresQueueUrl', {
      value: maintenance.failureQueue.queueUrl,
      description: 'Records of failed maintenance runs (infra/README.md: read, then purge)',
    });
    mail.identity.dkimRecords.forEach((record, index) => {
      new CfnOutput(this, `DkimRecord${index + 1}`, {
        value: `${record.name} CNAME ${record.value}`,
        description: `DNS record ${index + 1} of 3 for ${settings.mail.domain}`,
      });
    });

    acknowledgeStackFindings({
      settings,
      networkPolicy: wiring.networkPolicy,
      instance: database.instance,
      secrets: { appSecret: database.appSecret, jwtSecret: secrets.jwt, stripeSecret: secrets.stripe },
      routeStacks: this.routeStacks,
    });
  }
}

const upperFirst = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
