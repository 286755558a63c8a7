import { Annotations, CfnOutput, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import type { DatabaseProxy } from 'aws-cdk-lib/aws-rds';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { routeList } from '../functions/routes';
import type { RouteDefinition } from '../lib/http/route';
import { AlarmTopic } from './constructs/alarms';
import { Api } from './constructs/api';
import { Database } from './constructs/database';
import { type DeployedFunction, FunctionWiring } from './constructs/function-wiring';
import { ImportQueue, ImportWorker } from './constructs/imports';
import { Mail } from './constructs/mail';
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
 * behind one HTTP API, over RDS PostgreSQL behind RDS Proxy, with the object bucket, the SES
 * identity, secrets, a scheduled maintenance function, the evidence import queue and its worker,
 * a migration step and per-route alarms.
 */
export class CaseEvidenceStack extends Stack {
  readonly settings: EnvironmentSettings;
  readonly functions: DeployedFunction[];
  readonly api: Api;
  readonly alarmTopic: ITopic;
  readonly routeStacks: RouteStack[];
  readonly proxy: DatabaseProxy;
  readonly bucket: Bucket;
  readonly importQueue: ImportQueue;
  readonly importWorker: ImportWorker;

  constructor(scope: Construct, id: string, props: CaseEvidenceStackProps) {
    super(scope, id, { terminationProtection: props.settings.retainData, ...props });
    this.settings = props.settings;
    const settings = props.settings;
    const routes = props.routes ?? routeList;
    Tags.of(this).add('service', 'case-evidence-billing');
    Tags.of(this).add('environment', settings.name);

    const network = new Network(this, settings);
    const database = new Database(this, settings, network);
    this.proxy = database.proxy;
    const secrets = new ServiceSecrets(this, settings);
    const objectStore = new ObjectStore(this, settings);
    this.bucket = objectStore.bucket;
    const mail = new Mail(this, settings);
    const importQueue = new ImportQueue(this, settings);
    this.importQueue = importQueue;
    const wiring = new FunctionWiring(this, { settings, network, database, secrets, objectStore, mail, importQueue });
    this.functions = wiring.functions;
    const migration = new Migration(this, { settings, database, wiring });

    // ---- API, alarm topic, and one function per route of the route table, grouped by area into
    // nested stacks (a stack holds at most 500 resources).
    this.api = new Api(this, 'Api', { settings });
    this.alarmTopic = new AlarmTopic(this, 'Alarms', settings).topic;
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

    new Maintenance(this, { settings, wiring, migration });
    this.importWorker = new ImportWorker(this, {
      settings,
      wiring,
      migration,
      objectStore,
      importQueue,
      alarmTopic: this.alarmTopic,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'ObjectBucketName', { value: this.bucket.bucketName });
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
