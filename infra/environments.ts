import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS, DEFAULT_THROTTLE } from '../lib/http/route';

export type EnvironmentName = 'dev' | 'staging' | 'prod';

/** Everything that differs between the deployed environments of the service. */
export interface EnvironmentSettings {
  name: EnvironmentName;
  /** AWS account to deploy to. Unset: `-c account=...` or the CLI credentials' account. */
  account?: string;
  region: string;
  /** Two AZs of the region; listed so synth never has to look them up. */
  availabilityZones?: [string, string];
  /** NAT gateways (Lambdas reach Secrets Manager, SES and Stripe through them): 1 saves money, 2 survives an AZ outage. */
  natGateways: 1 | 2;

  /** Web app base URL: emailed links point at it (APP_URL). */
  appUrl: string;
  /** Origins allowed by CORS on the API and the bucket. */
  corsOrigins: string[];
  mail: {
    /** SES sending identity (a domain; DKIM records are output after deploy). */
    domain: string;
    /** MAIL_FROM, an address of that domain. */
    from: string;
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
  database: {
    /** RDS instance class, e.g. t4g.micro. */
    instanceType: string;
    multiAz: boolean;
    allocatedStorageGb: number;
    maxAllocatedStorageGb: number;
    backupRetentionDays: number;
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
    /** Subscribed to the alarm topic; unset: subscribe yourself. */
    email?: string;
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
    natGateways: 1,
    appUrl: 'https://dev.app.case-evidence.example',
    corsOrigins: ['https://dev.app.case-evidence.example', 'http://localhost:5173'],
    mail: { domain: 'dev.case-evidence.example', from: 'Case Evidence (dev) <no-reply@dev.case-evidence.example>' },
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
    },
    sourceMapsAtRuntime: true,
    maintenanceEveryMinutes: 5,
    alarms: { errorRatePercent: 10, p99LatencyMs: 5000 },
  },
  staging: {
    ...shared,
    name: 'staging',
    natGateways: 1,
    appUrl: 'https://staging.app.case-evidence.example',
    corsOrigins: ['https://staging.app.case-evidence.example'],
    mail: {
      domain: 'staging.case-evidence.example',
      from: 'Case Evidence (staging) <no-reply@staging.case-evidence.example>',
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
    },
    sourceMapsAtRuntime: true,
    maintenanceEveryMinutes: 1,
    alarms: { errorRatePercent: 5, p99LatencyMs: 3000 },
  },
  prod: {
    ...shared,
    name: 'prod',
    natGateways: 2,
    appUrl: 'https://app.case-evidence.example',
    corsOrigins: ['https://app.case-evidence.example'],
    mail: { domain: 'case-evidence.example', from: 'Case Evidence <no-reply@case-evidence.example>' },
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
    },
    sourceMapsAtRuntime: false,
    maintenanceEveryMinutes: 1,
    imports: { workerMemoryMb: 1769, workerConcurrency: 5 },
    alarms: { errorRatePercent: 1, p99LatencyMs: 2000 },
  },
};

export function isEnvironmentName(name: string): name is EnvironmentName {
  return Object.hasOwn(environments, name);
}
