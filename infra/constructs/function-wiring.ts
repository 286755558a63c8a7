import type { Stack } from 'aws-cdk-lib';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { RouteDefinition } from '../../lib/http/route';
import { CONNECTIONS_PER_PROCESS } from '../concurrency-budget';
import type { EnvironmentSettings } from '../environments';
import { acknowledgePrefixWildcards } from '../nag';
import { type FunctionPermissions, permissionsFor } from '../permissions';
import type { Database } from './database';
import type { ImportQueue } from './imports';
import type { Mail } from './mail';
import type { Network } from './network';
import type { ObjectStore } from './object-store';
import type { ServiceSecrets } from './secrets';
import type { ServiceFunction, ServiceFunctionProps } from './service-function';

export interface DeployedFunction {
  name: string;
  construct: ServiceFunction;
  permissions: FunctionPermissions;
  route?: RouteDefinition;
}

/**
 * What every function of the service shares (network, environment) and the grants each one gets
 * from what its bundle uses. Built in the stack's scope (see Network).
 */
export class FunctionWiring {
  readonly networkPolicy: ManagedPolicy;
  /** The ServiceFunction props every function takes. */
  readonly shared: Pick<ServiceFunctionProps, 'settings' | 'vpc' | 'securityGroup' | 'networkPolicy'>;
  /** The environment of the route and maintenance functions. */
  readonly environment: Record<string, string>;
  readonly functions: DeployedFunction[] = [];

  constructor(
    stack: Stack,
    private readonly parts: {
      settings: EnvironmentSettings;
      network: Network;
      database: Database;
      secrets: ServiceSecrets;
      /** CloudFront's x-origin-verify value (infra/constructs/edge.ts). */
      originVerify: ISecret;
      objectStore: ObjectStore;
      mail: Mail;
      importQueue: ImportQueue;
    },
  ) {
    const { settings, network, database, secrets, originVerify } = parts;
    this.networkPolicy = new ManagedPolicy(stack, 'FunctionNetworking', {
      description: 'Network interfaces of VPC Lambda functions',
      statements: [
        new PolicyStatement({
          actions: [
            'ec2:CreateNetworkInterface',
            'ec2:DescribeNetworkInterfaces',
            'ec2:DescribeSubnets',
            'ec2:DeleteNetworkInterface',
            'ec2:AssignPrivateIpAddresses',
            'ec2:UnassignPrivateIpAddresses',
          ],
          resources: ['*'],
        }),
      ],
    });
    this.environment = {
      LOG_LEVEL: settings.logLevel,
      APP_URL: settings.appUrl,
      CORS_ORIGINS: settings.corsOrigins.join(','),
      MAIL_TRANSPORT: 'ses',
      MAIL_FROM: settings.mail.from,
      DB_POOL_MAX: String(CONNECTIONS_PER_PROCESS),
      ...database.environment,
      JWT_SECRET_ARN: secrets.jwt.secretArn,
      ORIGIN_VERIFY_SECRET_ARN: originVerify.secretArn,
      FEATURE_AUTOMATION_TOKENS: String(settings.features.automationTokens),
      FEATURE_SELF_SERVE_PLANS: String(settings.features.selfServePlans),
      FEATURE_CREDITS: String(settings.features.credits),
      FEATURE_BILLING_REPORTS: String(settings.features.billingReports),
    };
    this.shared = {
      settings,
      vpc: network.vpc,
      securityGroup: network.functionsSecurityGroup,
      networkPolicy: this.networkPolicy,
    };
  }

  /** Grants a function what it needs: its secrets always, SES/Stripe/S3 as its bundle shows, the import queue by name. */
  wire(name: string, construct: ServiceFunction, route?: RouteDefinition): DeployedFunction {
    const { database, secrets, objectStore, mail, importQueue } = this.parts;
    const permissions = permissionsFor(name, construct.bundleSources());
    const readable: ISecret[] = [database.appSecret, secrets.jwt, this.parts.originVerify];
    if (permissions.payments) {
      readable.push(secrets.stripe);
      construct.function.addEnvironment('STRIPE_SECRET_ARN', secrets.stripe.secretArn);
    }
    construct.addToRolePolicy(
      new PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: readable.map((secret) => secret.secretArn),
      }),
    );
    if (permissions.mail) {
      // SES authorizes the send against the configuration set as well as the identity.
      construct.function.addEnvironment('SES_CONFIGURATION_SET', mail.configurationSet.configurationSetName);
      construct.addToRolePolicy(
        new PolicyStatement({
          actions: ['ses:SendEmail'],
          resources: [...mail.identityArns, mail.configurationSetArn],
        }),
      );
    }
    const storage = { listParts: [], abortUpload: [], readVersions: [], ...permissions.storage };
    if (Object.values(storage).some((prefixes) => prefixes.length > 0)) {
      // Both buckets: lib/storage picks a key's bucket by its prefix.
      construct.function.addEnvironment('STORAGE_BUCKET', objectStore.bucketName);
      construct.function.addEnvironment('WORK_BUCKET', objectStore.workBucketName);
      const actions = {
        read: 's3:GetObject',
        write: 's3:PutObject',
        delete: 's3:DeleteObject',
        listParts: 's3:ListMultipartUploadParts',
        abortUpload: 's3:AbortMultipartUpload',
        readVersions: 's3:GetObjectVersion',
      } as const;
      for (const [access, action] of Object.entries(actions) as Array<[keyof typeof actions, string]>)
        if (storage[access].length > 0)
          construct.addToRolePolicy(
            new PolicyStatement({ actions: [action], resources: objectStore.objectArns(storage[access]) }),
          );
      acknowledgePrefixWildcards(construct.role, [...new Set(objectStore.objectArns(Object.values(storage).flat()))]);
    }
    if (permissions.importQueue) {
      construct.function.addEnvironment('IMPORT_QUEUE_URL', importQueue.queue.queueUrl);
      construct.addToRolePolicy(
        new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [importQueue.queue.queueArn] }),
      );
    }
    const deployed = { name, construct, permissions, ...(route ? { route } : {}) };
    this.functions.push(deployed);
    return deployed;
  }
}
