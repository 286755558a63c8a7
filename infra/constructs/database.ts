import { type CfnResource, Duration, type Stack } from 'aws-cdk-lib';
import { InstanceType, Port, SubnetType } from 'aws-cdk-lib/aws-ec2';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import {
  CaCertificate,
  Credentials,
  DatabaseInstance,
  DatabaseInstanceEngine,
  type DatabaseProxy,
  PerformanceInsightRetention,
  PostgresEngineVersion,
  StorageType,
} from 'aws-cdk-lib/aws-rds';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { PROXY_BORROW_TIMEOUT_SECONDS, PROXY_MAX_CONNECTIONS_PERCENT } from '../concurrency-budget';
import type { EnvironmentSettings } from '../environments';
import type { Network } from './network';
import { dataRemovalPolicy } from './retention';

const DATABASE_NAME = 'cebs';
const ADMIN_USER = 'cebs_admin';
const APP_USER = 'cebs_app';
/** RDS Proxy listens on the engine's default port whatever the instance's port. */
const PROXY_PORT = 5432;
/** Set by the concurrency budget (infra/concurrency-budget.ts), which says why. */
export { PROXY_BORROW_TIMEOUT_SECONDS } from '../concurrency-budget';

/**
 * PostgreSQL in the isolated subnets, reached only through RDS Proxy (which absorbs Lambda
 * connection storms). Two logins: the admin (migrations) and the application role the functions
 * use (DML only, created by the migration step). Built in the stack's scope (see Network).
 */
export class Database {
  readonly instance: DatabaseInstance;
  readonly proxy: DatabaseProxy;
  readonly adminSecret: ISecret;
  readonly appSecret: Secret;
  /** How the functions reach the database as the application login. */
  readonly environment: Record<string, string>;

  constructor(stack: Stack, settings: EnvironmentSettings, network: Network) {
    const dataRemoval = dataRemovalPolicy(settings);
    network.proxySecurityGroup.addIngressRule(
      network.functionsSecurityGroup,
      Port.tcp(PROXY_PORT),
      'Postgres from the functions',
    );

    const instanceIdentifier = `case-evidence-${settings.name}`;
    // Created here (not with cloudwatchLogsRetention, which adds a log-retention custom resource).
    const databaseLogs = new LogGroup(stack, 'DatabaseLogs', {
      logGroupName: `/aws/rds/instance/${instanceIdentifier}/postgresql`,
      retention: settings.logRetention,
      removalPolicy: dataRemoval,
    });
    this.instance = new DatabaseInstance(stack, 'Database', {
      instanceIdentifier,
      engine: DatabaseInstanceEngine.postgres({ version: PostgresEngineVersion.VER_17 }),
      instanceType: new InstanceType(settings.database.instanceType),
      vpc: network.vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroups: [network.databaseSecurityGroup],
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
      removalPolicy: dataRemoval,
      cloudwatchLogsExports: ['postgresql'],
      // 7 days: the free retention (Database Insights standard mode), encrypted with the RDS default key.
      enablePerformanceInsights: settings.database.performanceInsights,
      ...(settings.database.performanceInsights
        ? { performanceInsightRetention: PerformanceInsightRetention.DEFAULT }
        : {}),
      autoMinorVersionUpgrade: true,
      publiclyAccessible: false,
    });
    this.instance.node.addDependency(databaseLogs);
    // The generated admin login lives as long as the database it opens (its default is DESTROY,
    // which would delete it with the stack while the database stays). The subnet group too: CDK
    // gives it DESTROY for any policy but RETAIN, and a kept instance still sits in it.
    // (`instance.secret` is its attachment to the instance: the secret itself is the child `Secret`.)
    (this.instance.node.findChild('Secret') as Secret).applyRemovalPolicy(dataRemoval);
    (this.instance.node.findChild('SubnetGroup').node.defaultChild as CfnResource).applyRemovalPolicy(dataRemoval);
    this.adminSecret = this.instance.secret!;
    this.appSecret = new Secret(stack, 'AppDatabaseCredentials', {
      description: `Login of the route functions to ${DATABASE_NAME} (${settings.name})`,
      generateSecretString: {
        secretStringTemplate: JSON.stringify({ username: APP_USER }),
        generateStringKey: 'password',
        excludePunctuation: true,
        passwordLength: 40,
      },
      removalPolicy: dataRemoval,
    });
    this.proxy = this.instance.addProxy('Proxy', {
      // Unique per environment: without a name CDK names it after the construct id, `Proxy` in every
      // environment, and the second environment in one account fails to create it.
      dbProxyName: instanceIdentifier,
      secrets: [this.adminSecret, this.appSecret],
      vpc: network.vpc,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroups: [network.proxySecurityGroup],
      requireTLS: true,
      iamAuth: false,
      // Functions keep their connection while their environment lives (frozen between
      // invocations); a long idle timeout keeps a thawed function from finding it closed.
      idleClientTimeout: Duration.hours(2),
      maxConnectionsPercent: PROXY_MAX_CONNECTIONS_PERCENT,
      borrowTimeout: Duration.seconds(PROXY_BORROW_TIMEOUT_SECONDS),
      debugLogging: false,
    });
    this.instance.connections.allowDefaultPortFrom(network.proxySecurityGroup, 'Postgres from the RDS Proxy');
    this.environment = {
      DATABASE_SECRET_ARN: this.appSecret.secretArn,
      DATABASE_HOST: this.proxy.endpoint,
      DATABASE_PORT: String(PROXY_PORT),
      DATABASE_NAME,
    };
  }
}
