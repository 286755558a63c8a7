import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  Annotations,
  CfnOutput,
  CustomResource,
  Duration,
  RemovalPolicy,
  SecretValue,
  Stack,
  type StackProps,
  Tags,
} from 'aws-cdk-lib';
import {
  FlowLogDestination,
  FlowLogTrafficType,
  GatewayVpcEndpointAwsService,
  InstanceType,
  IpAddresses,
  Port,
  SecurityGroup,
  SubnetType,
  Vpc,
} from 'aws-cdk-lib/aws-ec2';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import {
  CaCertificate,
  Credentials,
  DatabaseInstance,
  DatabaseInstanceEngine,
  type DatabaseProxy,
  PostgresEngineVersion,
  StorageType,
} from 'aws-cdk-lib/aws-rds';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { EmailIdentity, Identity } from 'aws-cdk-lib/aws-ses';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { routeList } from '../functions/routes';
import type { RouteDefinition } from '../lib/http/route';
import { REPOSITORY_ROOT } from './bundling';
import { AlarmTopic } from './constructs/alarms';
import { Api } from './constructs/api';
import { groupRoutes, RouteStack } from './constructs/route-stack';
import { ServiceFunction } from './constructs/service-function';
import type { EnvironmentSettings } from './environments';
import { acknowledgePrefixWildcards, acknowledgeStackFindings } from './nag';
import { type FunctionPermissions, permissionsFor } from './permissions';

const DATABASE_NAME = 'cebs';
const ADMIN_USER = 'cebs_admin';
const APP_USER = 'cebs_app';
/** RDS Proxy listens on the engine's default port whatever the instance's port. */
const PROXY_PORT = 5432;
/** Connections per function instance: one request at a time, plus one for after-commit work. */
const LAMBDA_POOL_MAX = 2;

export interface CaseEvidenceStackProps extends StackProps {
  settings: EnvironmentSettings;
  /** Defaults to every route of functions/routes.ts (tests may pass a subset). */
  routes?: readonly RouteDefinition[];
}

export interface DeployedFunction {
  name: string;
  construct: ServiceFunction;
  permissions: FunctionPermissions;
  route?: RouteDefinition;
}

/**
 * The service in one environment: every route of the route table as its own Lambda function
 * behind one HTTP API, over RDS PostgreSQL behind RDS Proxy, with the object bucket, the SES
 * identity, secrets, a scheduled maintenance function, a migration step and per-route alarms.
 */
export class CaseEvidenceStack extends Stack {
  readonly settings: EnvironmentSettings;
  readonly functions: DeployedFunction[] = [];
  readonly api: Api;
  readonly alarmTopic: ITopic;
  readonly routeStacks: RouteStack[];
  readonly proxy: DatabaseProxy;
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string, props: CaseEvidenceStackProps) {
    super(scope, id, { terminationProtection: props.settings.retainData, ...props });
    const settings = (this.settings = props.settings);
    const routes = props.routes ?? routeList;
    const dataRemoval = settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    Tags.of(this).add('service', 'case-evidence-billing');
    Tags.of(this).add('environment', settings.name);

    // ---- Network: public subnets for the NAT gateways, private subnets with egress for the
    // functions (Secrets Manager, SES, Stripe), isolated subnets for the database and its proxy.
    const vpc = new Vpc(this, 'Vpc', {
      ipAddresses: IpAddresses.cidr('10.40.0.0/16'),
      availabilityZones: settings.availabilityZones ?? [`${this.region}a`, `${this.region}b`],
      natGateways: settings.natGateways,
      subnetConfiguration: [
        { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'functions', subnetType: SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
        { name: 'data', subnetType: SubnetType.PRIVATE_ISOLATED, cidrMask: 24 },
      ],
      flowLogs: {
        rejected: {
          trafficType: FlowLogTrafficType.REJECT,
          destination: FlowLogDestination.toCloudWatchLogs(
            new LogGroup(this, 'FlowLogs', { retention: settings.logRetention, removalPolicy: RemovalPolicy.DESTROY }),
          ),
        },
      },
    });
    // S3 traffic (report uploads, presigned downloads) stays off the NAT gateways.
    vpc.addGatewayEndpoint('S3Endpoint', { service: GatewayVpcEndpointAwsService.S3 });

    const functionsSg = new SecurityGroup(this, 'FunctionsSecurityGroup', {
      vpc,
      description: 'Lambda functions of the service',
      allowAllOutbound: true,
    });
    const proxySg = new SecurityGroup(this, 'ProxySecurityGroup', {
      vpc,
      description: 'RDS Proxy: Postgres from the functions only',
      allowAllOutbound: false,
    });
    const databaseSg = new SecurityGroup(this, 'DatabaseSecurityGroup', {
      vpc,
      description: 'RDS PostgreSQL: from the proxy only',
      allowAllOutbound: false,
    });
    proxySg.addIngressRule(functionsSg, Port.tcp(PROXY_PORT), 'Postgres from the functions');

    // ---- Database: PostgreSQL in the isolated subnets, reached only through RDS Proxy (which
    // absorbs Lambda connection storms). Two logins: the admin (migrations) and the application
    // role the functions use (DML only, created by the migration step).
    const instanceIdentifier = `case-evidence-${settings.name}`;
    // Created here (not with cloudwatchLogsRetention, which adds a log-retention custom resource).
    const databaseLogs = new LogGroup(this, 'DatabaseLogs', {
      logGroupName: `/aws/rds/instance/${instanceIdentifier}/postgresql`,
      retention: settings.logRetention,
      removalPolicy: dataRemoval,
    });
    const instance = new DatabaseInstance(this, 'Database', {
      instanceIdentifier,
      engine: DatabaseInstanceEngine.postgres({ version: PostgresEngineVersion.VER_17 }),
      instanceType: new InstanceType(settings.database.instanceType),
      vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroups: [databaseSg],
      databaseName: DATABASE_NAME,
      credentials: Credentials.fromGeneratedSecret(ADMIN_USER, { excludeCharacters: ` %+~\`#$&*()|[]{}:;<>?!'/@"\\` }),
      multiAz: settings.database.multiAz,
      allocatedStorage: settings.database.allocatedStorageGb,
      maxAllocatedStorage: settings.database.maxAllocatedStorageGb,
      storageType: StorageType.GP3,
      storageEncrypted: true,
      caCertificate: CaCertificate.RDS_CA_RSA2048_G1,
      backupRetention: Duration.days(settings.database.backupRetentionDays),
      deleteAutomatedBackups: !settings.retainData,
      deletionProtection: settings.retainData,
      removalPolicy: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      cloudwatchLogsExports: ['postgresql'],
      autoMinorVersionUpgrade: true,
      publiclyAccessible: false,
    });
    instance.node.addDependency(databaseLogs);
    const adminSecret = instance.secret!;
    const appSecret = new Secret(this, 'AppDatabaseCredentials', {
      description: `Login of the route functions to ${DATABASE_NAME} (${settings.name})`,
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ username: APP_USER }),
        generateStringKey: 'password',
        excludePunctuation: true,
        passwordLength: 40,
      },
      removalPolicy: dataRemoval,
    });
    this.proxy = instance.addProxy('Proxy', {
      secrets: [adminSecret, appSecret],
      vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroups: [proxySg],
      requireTLS: true,
      iamAuth: false,
      // Functions keep their connection while their environment lives (frozen between
      // invocations); a long idle timeout keeps a thawed function from finding it closed.
      idleClientTimeout: Duration.hours(2),
      maxConnectionsPercent: 90,
      debugLogging: false,
    });
    instance.connections.allowDefaultPortFrom(proxySg, 'Postgres from the RDS Proxy');

    // ---- Secrets read at cold start.
    const jwtSecret = new Secret(this, 'JwtSigningKey', {
      description: `HMAC key of access tokens (${settings.name})`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: dataRemoval,
    });
    const stripeSecret: ISecret = settings.stripe.secretArn
      ? Secret.fromSecretCompleteArn(this, 'StripeKeys', settings.stripe.secretArn)
      : new Secret(this, 'StripeKeys', {
          description: `Stripe keys (${settings.name}): fill in STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET`,
          // Placeholders only (empty values are ignored by lib/aws/secrets.ts); set the real
          // keys with `aws secretsmanager put-secret-value`, deployments never overwrite them.
          secretStringValue: SecretValue.unsafePlainText(
            JSON.stringify({ STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '' }),
          ),
          removalPolicy: dataRemoval,
        });

    // ---- Object bucket (report PDFs, evidence attachments) and its access-log bucket.
    const accessLogs = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ expiration: Duration.days(settings.retainData ? 365 : 30) }],
      removalPolicy: dataRemoval,
    });
    // Named, so functions in other (nested) stacks get literal object ARNs for their prefixes.
    const objectBucketName = `case-evidence-${settings.name}-objects-${this.account}-${this.region}`;
    this.bucket = new Bucket(this, 'Objects', {
      bucketName: objectBucketName,
      // SSE-KMS with the AWS managed key (lib/storage writes with ServerSideEncryption aws:kms).
      encryption: BucketEncryption.KMS_MANAGED,
      bucketKeyEnabled: true,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'objects/',
      lifecycleRules: [
        { abortIncompleteMultipartUploadAfter: Duration.days(7) },
        { noncurrentVersionExpiration: Duration.days(settings.retainData ? 365 : 30) },
      ],
      // Presigned downloads and uploads from the web app.
      cors: [
        {
          allowedMethods: [HttpMethods.GET, HttpMethods.PUT],
          allowedOrigins: settings.corsOrigins,
          allowedHeaders: ['*'],
          maxAge: 3600,
        },
      ],
      removalPolicy: dataRemoval,
    });

    // ---- SES sending identity (DKIM records are stack outputs).
    const mailIdentity = new EmailIdentity(this, 'MailIdentity', { identity: Identity.domain(settings.mail.domain) });
    const sesIdentityArns = [settings.mail.domain, ...(settings.mail.extraIdentities ?? [])].map((identity) =>
      this.formatArn({ service: 'ses', resource: 'identity', resourceName: identity }),
    );

    // ---- Functions: shared pieces.
    const networkPolicy = new ManagedPolicy(this, 'FunctionNetworking', {
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
    const databaseEnvironment = {
      DATABASE_SECRET_ARN: appSecret.secretArn,
      DATABASE_HOST: this.proxy.endpoint,
      DATABASE_PORT: String(PROXY_PORT),
      DATABASE_NAME,
    };
    const commonEnvironment: Record<string, string> = {
      LOG_LEVEL: settings.logLevel,
      APP_URL: settings.appUrl,
      CORS_ORIGINS: settings.corsOrigins.join(','),
      MAIL_TRANSPORT: 'ses',
      MAIL_FROM: settings.mail.from,
      DB_POOL_MAX: String(LAMBDA_POOL_MAX),
      ...databaseEnvironment,
      JWT_SECRET_ARN: jwtSecret.secretArn,
      FEATURE_AUTOMATION_TOKENS: String(settings.features.automationTokens),
      FEATURE_SELF_SERVE_PLANS: String(settings.features.selfServePlans),
      FEATURE_CREDITS: String(settings.features.credits),
      FEATURE_BILLING_REPORTS: String(settings.features.billingReports),
    };
    const shared = { settings, vpc, securityGroup: functionsSg, networkPolicy };

    /** Grants a function what it needs: its secrets always, SES/Stripe/S3 as its bundle shows. */
    const wire = (name: string, construct: ServiceFunction, route?: RouteDefinition): DeployedFunction => {
      const permissions = permissionsFor(name, construct.bundleSources());
      const secrets: ISecret[] = [appSecret, jwtSecret];
      if (permissions.payments) {
        secrets.push(stripeSecret);
        construct.function.addEnvironment('STRIPE_SECRET_ARN', stripeSecret.secretArn);
      }
      construct.addToRolePolicy(
        new PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: secrets.map((secret) => secret.secretArn),
        }),
      );
      if (permissions.mail)
        construct.addToRolePolicy(new PolicyStatement({ actions: ['ses:SendEmail'], resources: sesIdentityArns }));
      const { read, write } = permissions.storage;
      if (read.length > 0 || write.length > 0) {
        construct.function.addEnvironment('STORAGE_BUCKET', objectBucketName);
        const objects = (prefixes: string[]) =>
          prefixes.map((prefix) =>
            this.formatArn({
              service: 's3',
              region: '',
              account: '',
              resource: objectBucketName,
              resourceName: `${prefix}*`,
            }),
          );
        if (read.length > 0)
          construct.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: objects(read) }));
        if (write.length > 0)
          construct.addToRolePolicy(new PolicyStatement({ actions: ['s3:PutObject'], resources: objects(write) }));
        acknowledgePrefixWildcards(construct.role, [...new Set([...objects(read), ...objects(write)])]);
      }
      const deployed = { name, construct, permissions, ...(route ? { route } : {}) };
      this.functions.push(deployed);
      return deployed;
    };

    // ---- Migration step: runs the drizzle migrations on every deployment that changes them,
    // before any function of this deployment is updated.
    const migrate = new ServiceFunction(this, 'Migrate', {
      ...shared,
      entry: 'infra/functions/migrate.ts',
      description: 'Applies the drizzle migrations and the application role grants',
      environment: {
        ...databaseEnvironment,
        DATABASE_ADMIN_SECRET_ARN: adminSecret.secretArn,
        LOG_LEVEL: settings.logLevel,
      },
      memoryMb: 512,
      timeoutSeconds: 600,
      retryAttempts: 0,
      bundling: { copyDirectories: ['drizzle'] },
    });
    migrate.addToRolePolicy(
      new PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: [adminSecret.secretArn, appSecret.secretArn],
      }),
    );
    const migration = new CustomResource(this, 'Migrations', {
      serviceToken: migrate.function.functionArn,
      resourceType: 'Custom::DrizzleMigrations',
      properties: { migrationsHash: hashDirectory(join(REPOSITORY_ROOT, 'drizzle')) },
      serviceTimeout: Duration.minutes(12),
    });
    migration.node.addDependency(this.proxy, instance);

    // ---- API, alarm topic, and one function per route of the route table, grouped by area into
    // nested stacks (a stack holds at most 500 resources).
    this.api = new Api(this, 'Api', { settings });
    this.alarmTopic = new AlarmTopic(this, 'Alarms', settings).topic;
    const createRouteFunction = (scope: Construct, route: RouteDefinition): ServiceFunction => {
      const construct = new ServiceFunction(scope, upperFirst(route.operationId), {
        ...shared,
        entry: route.handler,
        description: `${route.method} ${route.path}: ${route.summary}`,
        environment: commonEnvironment,
        memoryMb: route.lambda?.memoryMb,
        timeoutSeconds: route.lambda?.timeoutSeconds,
        reservedConcurrency: route.lambda?.reservedConcurrency,
      });
      // New code runs against the new schema: functions update after the migration step.
      construct.function.node.addDependency(migration);
      if ((route.lambda?.timeoutSeconds ?? 0) > 30) {
        Annotations.of(construct).addWarningV2(
          'cebs:integration-timeout',
          `${route.operationId}: Lambda timeout ${route.lambda?.timeoutSeconds} s exceeds the HTTP API integration limit of 30 s; clients get 503 after 30 s.`,
        );
      }
      wire(route.operationId, construct, route);
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

    // ---- Maintenance on a schedule.
    const maintenance = new ServiceFunction(this, 'Maintenance', {
      ...shared,
      entry: 'infra/functions/maintenance.ts',
      description: 'Outbox delivery, rate-limit pruning, processor customers',
      environment: commonEnvironment,
      memoryMb: 512,
      timeoutSeconds: 120,
      retryAttempts: 0,
    });
    maintenance.function.node.addDependency(migration);
    wire('maintenance', maintenance);
    new Rule(this, 'MaintenanceSchedule', {
      description: 'Runs lib/maintenance.ts',
      schedule: Schedule.rate(Duration.minutes(settings.maintenanceEveryMinutes)),
      targets: [new LambdaFunction(maintenance.function, { retryAttempts: 0 })],
    });

    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'ObjectBucketName', { value: this.bucket.bucketName });
    new CfnOutput(this, 'StripeSecretArn', {
      value: stripeSecret.secretArn,
      description: 'Put STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET here',
    });
    new CfnOutput(this, 'MigrateFunctionName', {
      value: migrate.function.functionName,
      description: 'Invoke to re-run migrations by hand',
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topicArn });
    mailIdentity.dkimRecords.forEach((record, index) => {
      new CfnOutput(this, `DkimRecord${index + 1}`, {
        value: `${record.name} CNAME ${record.value}`,
        description: `DNS record ${index + 1} of 3 for ${settings.mail.domain}`,
      });
    });

    acknowledgeStackFindings({
      settings,
      networkPolicy,
      instance,
      secrets: { appSecret, jwtSecret, stripeSecret },
      routeStacks: this.routeStacks,
    });
  }
}

/** Content hash of a directory tree: the migration step re-runs when it changes. */
function hashDirectory(directory: string): string {
  const hash = createHash('sha256');
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else hash.update(relative(directory, path)).update('\0').update(readFileSync(path)).update('\0');
    }
  };
  walk(directory);
  return hash.digest('hex');
}

const upperFirst = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
