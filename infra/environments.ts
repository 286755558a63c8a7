import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS, DEFAULT_THROTTLE } from '../lib/http/route';

export type EnvironmentName = 'dev' | 'staging' | 'prod';

/** Everything that differs between the deployed environments of the service. */
export interface EnvironmentSettings {
  name: EnvironmentName;
  /**
   * The AWS account of this environment, pinned: synth refuses another `-c account` or CLI
   * account (infra/build-app.ts), so prod cannot be deployed into whatever account the CLI points
   * at. The committed ids are placeholders (PLACEHOLDER_ACCOUNTS): `npm run deploy` refuses them.
   */
  account: string;
  region: string;
  /** Two AZs of the region; listed so synth never has to look them up. */
  availabilityZones?: [string, string];
  /** NAT gateways (Lambdas reach Secrets Manager, SES and Stripe through them): 1 saves money, 2 survives an AZ outage. */
  natGateways: 1 | 2;

  /** Web app base URL: emailed links point at it (APP_URL). */
  appUrl: string;
  /** Origins allowed by CORS on the API and the bucket. */
  corsOrigins: string[];
  /**
   * The public edge: CloudFront with an AWS WAF web ACL in front of the HTTP API, whose own
   * execute-api endpoint is disabled (infra/constructs/edge.ts).
   */
  edge: {
    /** Public hostname of the API (CloudFront alternate domain name). */
    apiDomain: string;
    /** ACM certificate covering apiDomain, in us-east-1 (CloudFront takes certificates only there). */
    certificateArn: string;
    /** API Gateway's regional custom domain: CloudFront's origin. */
    originDomain: string;
    /** ACM certificate covering originDomain, in the stack's region. */
    originCertificateArn: string;
    /** WAF rate-based rules, requests per client IP per 5-minute window (WAF's evaluation window). */
    rateLimitsPer5Minutes: {
      /** Sign-in, registration, password reset and change, token refresh. */
      authentication: number;
      /** The routes that tell whether an address has an account: check-email, register, forgot-password. */
      enumeration: number;
      /** Every request of one IP: a ceiling far above any real client. */
      everything: number;
    };
  };
  mail: {
    /** SES sending identity (a domain; DKIM records are output after deploy). */
    domain: string;
    /** MAIL_FROM, an address of that domain. */
    from: string;
    /** Custom MAIL FROM (bounce) domain, a subdomain of `domain` (SPF and MX records are outputs). */
    mailFromDomain: string;
    /**
     * Extra SES identities the functions may send as or to. While the account is in the SES
     * sandbox, SES also authorizes against each verified recipient identity: list them here.
     */
    extraIdentities?: string[];
  };
  stripe: {
    /** An existing secret (JSON STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET); unset: the stack creates an empty one to fill in. */
    secretArn?: string;
  };
  /** FEATURE_* flags of lib/config.ts. */
  features: { automationTokens: boolean; selfServePlans: boolean; credits: boolean; billingReports: boolean };
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  logRetention: RetentionDays;
  /** true: database, bucket, secrets and logs survive `cdk destroy` and replacement (prod data). */
  retainData: boolean;
  /** S3 Object Lock default retention of the object bucket (evidence, reports). */
  objectLock: { mode: 'GOVERNANCE' | 'COMPLIANCE'; retentionDays: number };
  /** AWS Backup of the database and the object bucket into a locked vault. */
  backup: {
    /** Daily recovery points are kept this long (also the vault lock's minimum retention). */
    retentionDays: number;
    /** A second region every recovery point is copied to (prod). */
    copyToRegion?: string;
  };
  /** How a new version of a route function takes traffic (CodeDeploy, rolled back on its error alarm). */
  deployment: 'ALL_AT_ONCE' | 'CANARY_10PERCENT_5MINUTES';
  database: {
    /** RDS instance class, e.g. t4g.micro. */
    instanceType: string;
    multiAz: boolean;
    allocatedStorageGb: number;
    maxAllocatedStorageGb: number;
    backupRetentionDays: number;
    performanceInsights: boolean;
  };
  /** Defaults for functions whose route entry does not set memory/timeout. */
  lambda: { memoryMb: number; timeoutSeconds: number };
  /**
   * NODE_OPTIONS=--enable-source-maps: readable stack traces in the logs, about 10 ms more per cold
   * start (measured with `npm run size`). The .map files ship either way.
   */
  sourceMapsAtRuntime: boolean;
  /** Stage default throttle for routes; every route of the table also gets its own. */
  defaultThrottle: { rate: number; burst: number };
  /** Outbox retries, rate-limit pruning, processor customers (lib/maintenance.ts). */
  maintenanceEveryMinutes: number;
  /** The evidence import worker (infra/functions/import-worker.ts). */
  imports: {
    /** Its memory, which also sets its CPU: 1769 MB is one whole vCPU, what a single-threaded import can use. */
    workerMemoryMb: number;
    /** Imports running at once (reserved concurrency); each holds two database connections. */
    workerConcurrency: number;
  };
  alarms: {
    /** Subscribed (e-mail) to the alarm topic; each address confirms once. */
    emails: string[];
    /** 5xx share of a route's requests over 5 minutes. */
    errorRatePercent: number;
    /** p99 of a route's latency over 5 minutes. */
    p99LatencyMs: number;
  };
}

const shared = {
  region: 'us-east-1',
  defaultThrottle: { ...DEFAULT_THROTTLE },
  lambda: { memoryMb: 1024, timeoutSeconds: DEFAULT_FUNCTION_TIMEOUT_SECONDS },
  features: { automationTokens: true, selfServePlans: true, credits: true, billingReports: true },
  imports: { workerMemoryMb: 1769, workerConcurrency: 2 },
} as const;

export const environments: Record<EnvironmentName, EnvironmentSettings> = {
  dev: {
    ...shared,
    name: 'dev',
    account: '111111111111',
    edge: {
      apiDomain: 'api.dev.case-evidence.example',
      certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/00000000-0000-0000-0000-000000000001',
      originDomain: 'origin.api.dev.case-evidence.example',
      originCertificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/00000000-0000-0000-0000-000000000002',
      rateLimitsPer5Minutes: { authentication: 300, enumeration: 100, everything: 10_000 },
    },
    objectLock: { mode: 'GOVERNANCE', retentionDays: 1 },
    backup: { retentionDays: 7 },
    deployment: 'ALL_AT_ONCE',
    natGateways: 1,
    appUrl: 'https://dev.app.case-evidence.example',
    corsOrigins: ['https://dev.app.case-evidence.example', 'http://localhost:5173'],
    mail: {
      domain: 'dev.case-evidence.example',
      from: 'Case Evidence (dev) <no-reply@dev.case-evidence.example>',
      mailFromDomain: 'bounce.dev.case-evidence.example',
    },
    stripe: {},
    logLevel: 'DEBUG',
    logRetention: RetentionDays.ONE_WEEK,
    retainData: false,
    database: {
      instanceType: 't4g.micro',
      multiAz: false,
      allocatedStorageGb: 20,
      maxAllocatedStorageGb: 50,
      backupRetentionDays: 1,
      performanceInsights: false,
    },
    sourceMapsAtRuntime: true,
    maintenanceEveryMinutes: 5,
    alarms: { emails: ['oncall-dev@case-evidence.example'], errorRatePercent: 10, p99LatencyMs: 5000 },
  },
  staging: {
    ...shared,
    name: 'staging',
    account: '222222222222',
    edge: {
      apiDomain: 'api.staging.case-evidence.example',
      certificateArn: 'arn:aws:acm:us-east-1:222222222222:certificate/00000000-0000-0000-0000-000000000001',
      originDomain: 'origin.api.staging.case-evidence.example',
      originCertificateArn: 'arn:aws:acm:us-east-1:222222222222:certificate/00000000-0000-0000-0000-000000000002',
      rateLimitsPer5Minutes: { authentication: 300, enumeration: 100, everything: 10_000 },
    },
    objectLock: { mode: 'GOVERNANCE', retentionDays: 30 },
    backup: { retentionDays: 14 },
    deployment: 'ALL_AT_ONCE',
    natGateways: 1,
    appUrl: 'https://staging.app.case-evidence.example',
    corsOrigins: ['https://staging.app.case-evidence.example'],
    mail: {
      domain: 'staging.case-evidence.example',
      from: 'Case Evidence (staging) <no-reply@staging.case-evidence.example>',
      mailFromDomain: 'bounce.staging.case-evidence.example',
    },
    stripe: {},
    logLevel: 'INFO',
    logRetention: RetentionDays.ONE_MONTH,
    retainData: false,
    database: {
      instanceType: 't4g.small',
      multiAz: false,
      allocatedStorageGb: 20,
      maxAllocatedStorageGb: 100,
      backupRetentionDays: 7,
      performanceInsights: false,
    },
    sourceMapsAtRuntime: true,
    maintenanceEveryMinutes: 1,
    alarms: { emails: ['oncall-staging@case-evidence.example'], errorRatePercent: 5, p99LatencyMs: 3000 },
  },
  prod: {
    ...shared,
    name: 'prod',
    account: '333333333333',
    edge: {
      apiDomain: 'api.case-evidence.example',
      certificateArn: 'arn:aws:acm:us-east-1:333333333333:certificate/00000000-0000-0000-0000-000000000001',
      originDomain: 'origin.api.case-evidence.example',
      originCertificateArn: 'arn:aws:acm:us-east-1:333333333333:certificate/00000000-0000-0000-0000-000000000002',
      rateLimitsPer5Minutes: { authentication: 300, enumeration: 100, everything: 10_000 },
    },
    // Evidence is kept at least seven years and nobody, root included, can shorten that.
    objectLock: { mode: 'COMPLIANCE', retentionDays: 7 * 365 },
    backup: { retentionDays: 35, copyToRegion: 'us-west-2' },
    deployment: 'CANARY_10PERCENT_5MINUTES',
    natGateways: 2,
    appUrl: 'https://app.case-evidence.example',
    corsOrigins: ['https://app.case-evidence.example'],
    mail: {
      domain: 'case-evidence.example',
      from: 'Case Evidence <no-reply@case-evidence.example>',
      mailFromDomain: 'bounce.case-evidence.example',
    },
    stripe: {},
    features: { automationTokens: true, selfServePlans: true, credits: true, billingReports: true },
    logLevel: 'INFO',
    logRetention: RetentionDays.ONE_YEAR,
    retainData: true,
    database: {
      instanceType: 't4g.medium',
      multiAz: true,
      allocatedStorageGb: 50,
      maxAllocatedStorageGb: 500,
      backupRetentionDays: 14,
      performanceInsights: true,
    },
    sourceMapsAtRuntime: false,
    maintenanceEveryMinutes: 1,
    imports: { workerMemoryMb: 1769, workerConcurrency: 5 },
    alarms: { emails: ['oncall@case-evidence.example'], errorRatePercent: 1, p99LatencyMs: 2000 },
  },
};

export function isEnvironmentName(name: string): name is EnvironmentName {
  return Object.hasOwn(environments, name);
}

/** The account ids committed above stand in for real ones: `npm run deploy` refuses them. */
export const PLACEHOLDER_ACCOUNTS: readonly string[] = ['111111111111', '222222222222', '333333333333'];
