import * as z from 'zod/mini';

/** Environment flags arrive as strings; accept the usual spellings of on and off. */
const flag = (fallback: boolean) =>
  z.pipe(
    z.optional(z.enum(['true', 'false', '1', '0', 'on', 'off', 'yes', 'no'])),
    z.transform((value) => (value === undefined ? fallback : ['true', '1', 'on', 'yes'].includes(value))),
  );

const positiveInt = (fallback: number) =>
  z.pipe(
    z.optional(z.string().check(z.regex(/^\d+$/))),
    z.transform((value) => (value === undefined ? fallback : Number(value))),
  );

const ConfigSchema = z.object({
  /** postgres://... to use a Postgres server; unset means embedded PGlite in DATA_DIR. */
  DATABASE_URL: z.optional(z.string().check(z.minLength(1))),
  DATA_DIR: z._default(z.string(), '.data'),
  /** Connections per process to a Postgres server (Lambda: 1 or 2 behind RDS Proxy). */
  DB_POOL_MAX: positiveInt(10),
  /** How long to wait for a connection to a Postgres server before answering 503. */
  DB_CONNECT_TIMEOUT_SECONDS: positiveInt(2),
  /**
   * Longest statement the service runs (0: no limit). Below the function's timeout: the stack sets
   * it per function from the route's timeout; locally the default fits the default 10 s function.
   */
  DB_STATEMENT_TIMEOUT_MS: positiveInt(8000),
  PORT: positiveInt(3000),
  /** Interface the local server listens on. */
  HOST: z._default(z.string().check(z.minLength(1)), '127.0.0.1'),
  /** HMAC key for access tokens. Required in the cloud; locally one is generated into DATA_DIR. */
  JWT_SECRET: z.optional(z.string().check(z.minLength(32))),
  ACCESS_TOKEN_TTL_SECONDS: positiveInt(15 * 60),
  REFRESH_TOKEN_TTL_DAYS: positiveInt(30),
  AUTOMATION_TOKEN_DEFAULT_TTL_DAYS: positiveInt(365),
  FEATURE_AUTOMATION_TOKENS: flag(true),
  /** Base URL of the web app; only emailed links into the app point at it. */
  APP_URL: z._default(z.string().check(z.url()), 'http://localhost:3000'),
  MAIL_TRANSPORT: z._default(z.enum(['local', 'ses']), 'local'),
  MAIL_FROM: z._default(z.string(), 'Case Evidence <no-reply@case-evidence.local>'),
  /** SES configuration set every message is sent with (bounce/complaint events); the stack sets it. */
  SES_CONFIGURATION_SET: z.optional(z.string().check(z.minLength(1))),
  CORS_ORIGINS: z._default(z.string(), '*'),
  /** scrypt cost as log2(N); stored with each hash, so lowering it for tests never breaks verification. */
  PASSWORD_HASH_LOG_N: positiveInt(15),
  /**
   * Stripe secret key. Unset: the offline sandbox processor locally; deployed (see runsDeployed),
   * payments are not configured and what needs the processor answers 503 PAYMENTS_NOT_CONFIGURED.
   */
  STRIPE_SECRET_KEY: z.optional(z.string().check(z.minLength(1))),
  /** Stripe API base URL override (tests point the real SDK at a local double). */
  STRIPE_API_BASE: z.optional(z.url()),
  /** Signing secret of the Stripe webhook endpoint (whsec_...). */
  STRIPE_WEBHOOK_SECRET: z.optional(z.string().check(z.minLength(1))),
  FEATURE_SELF_SERVE_PLANS: flag(true),
  FEATURE_CREDITS: flag(true),
  FEATURE_BILLING_REPORTS: flag(true),
  /** S3 bucket for evidence (every key outside the work bucket's); unset means DATA_DIR/objects with signed local links. */
  STORAGE_BUCKET: z.optional(z.string().check(z.minLength(3))),
  /**
   * S3 bucket for staging uploads and generated documents (keys under `staging/` and `generated/`),
   * outside the evidence bucket's Object Lock; required with STORAGE_BUCKET (lib/storage).
   */
  WORK_BUCKET: z.optional(z.string().check(z.minLength(3))),
  /** SQS queue of evidence imports (the import worker's); unset means the local worker (LOCAL_IMPORT_SLOTS). */
  IMPORT_QUEUE_URL: z.optional(z.string().check(z.url())),
  /**
   * Imports the local server runs at once (its worker's slots; at most one per organization), in
   * worker threads with a Postgres server, in-process with PGlite.
   */
  LOCAL_IMPORT_SLOTS: positiveInt(2),
  /**
   * The most items (messages, rows, tickets) one import reads: the next fails the import
   * TOO_MANY_ITEMS, what came before it imported. 2,000,000 is twenty 1 GiB mailboxes' worth.
   */
  IMPORT_MAX_ITEMS: positiveInt(2_000_000),
  /**
   * Part size of multipart import uploads when smaller than the one chosen by size (at least 64 MiB,
   * lib/material/imports/multipart.ts): tests upload a file in parts of a few bytes. Unset in the cloud.
   */
  IMPORT_MULTIPART_PART_BYTES: z.optional(z.pipe(z.string().check(z.regex(/^[1-9]\d*$/)), z.transform(Number))),
  /**
   * Segment size of the worker's copy of an upload into evidence when smaller than 1 GiB
   * (lib/material/imports/evidence-copy.ts): tests copy small files in segments of a few bytes,
   * pausing between them. Unset in the cloud (S3 copies parts of at least 5 MiB).
   */
  IMPORT_COPY_SEGMENT_BYTES: z.optional(z.pipe(z.string().check(z.regex(/^[1-9]\d*$/)), z.transform(Number))),
  /** Public base URL of this API, for links it makes to itself; unset: where the local server listens (see publicBaseUrl). */
  PUBLIC_BASE_URL: z.optional(z.string().check(z.url())),
  LOG_LEVEL: z._default(z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']), 'INFO'),
  // Cloud only (set by the CDK stack in infra/; see lib/aws/secrets.ts). Secrets are read from
  // AWS Secrets Manager at cold start, never passed in the environment.
  /** RDS credentials (JSON username/password); used when DATABASE_URL is unset. */
  DATABASE_SECRET_ARN: z.optional(z.string().check(z.minLength(1))),
  /** Where to connect with those credentials: the RDS Proxy endpoint. */
  DATABASE_HOST: z.optional(z.string().check(z.minLength(1))),
  DATABASE_PORT: z.optional(z.pipe(z.string().check(z.regex(/^\d+$/)), z.transform(Number))),
  DATABASE_NAME: z.optional(z.string().check(z.minLength(1))),
  /** Secret whose string is the JWT signing key (becomes JWT_SECRET). */
  JWT_SECRET_ARN: z.optional(z.string().check(z.minLength(1))),
  /** Secret JSON with STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET. */
  STRIPE_SECRET_ARN: z.optional(z.string().check(z.minLength(1))),
  /** Secret whose string CloudFront sends as x-origin-verify (becomes ORIGIN_VERIFY_SECRET; lib/http/edge.ts). */
  ORIGIN_VERIFY_SECRET_ARN: z.optional(z.string().check(z.minLength(1))),
  /**
   * Set: the service sits behind CloudFront, answers only requests carrying this value in
   * x-origin-verify, and takes the client IP from CloudFront-Viewer-Address. Unset (local, tests):
   * the client IP is API Gateway's sourceIp.
   */
  ORIGIN_VERIFY_SECRET: z.optional(z.string().check(z.minLength(32))),
  /** Set by the Lambda runtime in every function (never by us): the process runs deployed. */
  AWS_LAMBDA_FUNCTION_NAME: z.optional(z.string().check(z.minLength(1))),
});

export type Config = z.infer<typeof ConfigSchema>;

let current: Config | undefined;

/** Validates an environment into the config (config() reads process.env once through it). */
export function parseConfig(env: Record<string, string | undefined>): Config {
  return ConfigSchema.parse(env);
}

/** Reads and validates the environment once; later calls return the same object. */
export function config(): Config {
  current ??= parseConfig(process.env);
  return current;
}

/** The base URL a client reaches a server on: a wildcard interface is reached as localhost. */
export function serverUrl(host: string, port: number): string {
  if (['0.0.0.0', '::', '[::]'].includes(host)) return `http://localhost:${port}`;
  // An IPv6 address goes in brackets in a URL.
  return host.includes(':') && !host.startsWith('[') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

let listeningUrl: string | undefined;

/** The local server reports where it listens once bound (PORT=0 picks a free port); undefined when it closes. */
export function useListeningUrl(url: string | undefined): void {
  listeningUrl = url;
}

/**
 * Base URL of this API for the links it builds to itself (object downloads and uploads, sandbox
 * checkout and invoice pages): PUBLIC_BASE_URL, else the address the local server listens on,
 * else the one it would listen on (HOST and PORT). Never APP_URL, which is the web app.
 */
export function publicBaseUrl(): string {
  const { PUBLIC_BASE_URL, HOST, PORT } = config();
  return (PUBLIC_BASE_URL ?? listeningUrl ?? serverUrl(HOST, PORT)).replace(/\/+$/, '');
}

/** A link to `path` (starting with /) on this API, keeping any path prefix of PUBLIC_BASE_URL. */
export function selfLink(path: string): URL {
  return new URL(`${publicBaseUrl()}${path}`);
}

/**
 * Whether the process runs as deployed by the stack: in a Lambda function (the runtime sets
 * AWS_LAMBDA_FUNCTION_NAME) or with a secret of the stack to read (STRIPE_SECRET_ARN,
 * DATABASE_SECRET_ARN). Deployed, nothing falls back to a local stand-in: without a Stripe key
 * payments are not configured (lib/billing/processor), never the sandbox processor, which the
 * bundles do not even carry (infra/bundling LOCAL_ONLY_MODULES).
 */
export function runsDeployed(): boolean {
  const { AWS_LAMBDA_FUNCTION_NAME, STRIPE_SECRET_ARN, DATABASE_SECRET_ARN } = config();
  return Boolean(AWS_LAMBDA_FUNCTION_NAME || STRIPE_SECRET_ARN || DATABASE_SECRET_ARN);
}

/**
 * How long a warm function keeps a secret it read from Secrets Manager before reading it again
 * (lib/aws/secrets.ts; docs/decisions.md "Issue 32"): how soon a value put in by hand reaches the
 * warm functions, against one GetSecretValue call (about 10-30 ms, $0.05 per 10,000) per function
 * instance and secret per period while it serves. Stripe's keys are put in after the first
 * deployment and rolled at Stripe with the old key kept valid for a while: a minute.
 * The others are rotated by hand (infra/README.md) with the old value refused at once: five minutes,
 * a short window without a call on most requests.
 */
export const SECRET_MAX_AGE_SECONDS = {
  stripe: 60,
  jwt: 300,
  originVerify: 300,
  database: 300,
} as const;

/** The config values that come from Secrets Manager in the cloud (lib/aws/secrets.ts). */
export type SecretValues = Partial<
  Record<'JWT_SECRET' | 'ORIGIN_VERIFY_SECRET' | 'STRIPE_SECRET_KEY' | 'STRIPE_WEBHOOK_SECRET', string | undefined>
>;

/**
 * Cloud only: the values read from Secrets Manager (lib/aws/secrets.ts) replace those named in
 * `values` (an undefined value unsets it: a key removed from the secret is gone), validated like
 * the environment; the rest of the config is kept.
 */
export function applySecrets(values: SecretValues): void {
  const names = Object.keys(values) as (keyof SecretValues)[];
  const parsed = parseConfig({ ...process.env, ...values });
  current = { ...config(), ...Object.fromEntries(names.map((name) => [name, parsed[name]])) };
}

/** Tests flip feature flags and limits through this, never through process.env. */
export function overrideConfig(changes: Partial<Config>): () => void {
  const before = { ...config() };
  current = { ...before, ...changes };
  return () => {
    current = before;
  };
}
