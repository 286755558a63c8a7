import { applySecrets, config, SECRET_MAX_AGE_SECONDS, type SecretValues } from '../config';
import { lazyRetrying } from '../lazy';

/**
 * Cloud only: secrets read from AWS Secrets Manager through Powertools Parameters, each kept for
 * its time-to-live (SECRET_MAX_AGE_SECONDS) and then read again, so a value put in by hand (the
 * Stripe keys after the first deployment, a rotated key) reaches warm functions without a cold
 * start. The CDK stack (infra/) gives each function the ARNs it may read (DATABASE_SECRET_ARN,
 * JWT_SECRET_ARN, ORIGIN_VERIFY_SECRET_ARN, STRIPE_SECRET_ARN); locally none is set, nothing here
 * runs and neither Powertools nor the SDK is loaded. `@aws-sdk/client-secrets-manager` is
 * provided by the Lambda runtime (bundles mark `@aws-sdk/*` external) and imported on first use.
 */

type Send = (secretId: string) => Promise<string>;

interface Provider {
  get(name: string, options: { maxAge: number }): Promise<unknown>;
}

let reader: Send | undefined;

/**
 * Powertools' Secrets Manager provider (its cache keeps each value for the maxAge of the read), on
 * the runtime's SDK client, or on a stand-in client when a test installed a reader. A failed
 * import is not kept: the next read tries again.
 */
const provider = lazyRetrying<Provider>(async () => {
  const { SecretsProvider } = await import('@aws-lambda-powertools/parameters/secrets');
  if (reader) return new SecretsProvider({ awsSdkV3Client: standInClient(reader) as never });
  const { SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  // Not traced (issue 35): read at every cold start, a subsegment would load the X-Ray SDK into
  // every cold start; the read's time is in Lambda's segment of the cold invocation.
  return new SecretsProvider({ awsSdkV3Client: new SecretsManagerClient({}) });
});

/** What Powertools takes for an SDK client (send, config, middlewareStack), answering from `read`. */
function standInClient(read: Send) {
  return {
    config: {},
    middlewareStack: { identify: () => [], addRelativeTo: () => undefined, add: () => undefined },
    send: async (command: { input: { SecretId: string } }) => ({ SecretString: await read(command.input.SecretId) }),
  };
}

/**
 * Reads in flight, dropped once settled. The provider's own cache holds one value per secret the
 * config names, read again past its maxAge: both bounded by the config's few secrets.
 */
const inFlight = new Map<string, Promise<string>>();

/**
 * The secret's string value, read again once older than `maxAgeSeconds`; a failed read is never
 * kept (the next call reads again). Concurrent reads of one secret share one call.
 */
export function readSecret(secretId: string, maxAgeSeconds: number = SECRET_MAX_AGE_SECONDS.database): Promise<string> {
  const key = `${secretId}\n${maxAgeSeconds}`;
  let value = inFlight.get(key);
  if (!value) {
    value = (async () => {
      const secret = await (await provider()).get(secretId, { maxAge: maxAgeSeconds });
      if (typeof secret !== 'string') throw new Error(`Secret ${secretId} has no string value`);
      return secret;
    })();
    inFlight.set(key, value);
    const settled = value;
    void settled.then(
      () => inFlight.delete(key),
      () => inFlight.delete(key),
    );
  }
  return value;
}

/** Tests read secrets from a function instead of AWS (through the same provider and its cache). */
export function useSecretReader(next: Send | undefined): void {
  reader = next;
  provider.reset();
  inFlight.clear();
}

/** Credentials JSON as RDS and Secrets Manager generate it (`username`, `password`, ...). */
interface DatabaseCredentials {
  username: string;
  password: string;
  host?: string;
  port?: number | string;
  dbname?: string;
}

/**
 * postgres:// URL for the credentials in DATABASE_SECRET_ARN. Host, port and database come from
 * DATABASE_HOST / DATABASE_PORT / DATABASE_NAME (the RDS Proxy endpoint) and fall back to the
 * secret's own fields (the instance endpoint).
 */
export async function cloudDatabaseUrl(): Promise<string> {
  const { DATABASE_SECRET_ARN, DATABASE_HOST, DATABASE_PORT, DATABASE_NAME } = config();
  if (!DATABASE_SECRET_ARN) throw new Error('DATABASE_SECRET_ARN is not set');
  return databaseUrl(JSON.parse(await readSecret(DATABASE_SECRET_ARN)) as DatabaseCredentials, {
    host: DATABASE_HOST,
    port: DATABASE_PORT,
    database: DATABASE_NAME,
  });
}

/** The current password of DATABASE_SECRET_ARN (read again past its time-to-live): asked for by each new connection. */
export async function cloudDatabasePassword(): Promise<string> {
  const { DATABASE_SECRET_ARN } = config();
  if (!DATABASE_SECRET_ARN) throw new Error('DATABASE_SECRET_ARN is not set');
  const { password } = JSON.parse(
    await readSecret(DATABASE_SECRET_ARN, SECRET_MAX_AGE_SECONDS.database),
  ) as DatabaseCredentials;
  if (!password) throw new Error('Database secret lacks password');
  return password;
}

export function databaseUrl(
  credentials: DatabaseCredentials,
  endpoint: { host?: string | undefined; port?: number | undefined; database?: string | undefined } = {},
): string {
  const host = endpoint.host ?? credentials.host;
  if (!credentials.username || !credentials.password || !host)
    throw new Error('Database secret lacks username, password or host');
  const port = endpoint.port ?? (credentials.port === undefined ? 5432 : Number(credentials.port));
  const database = endpoint.database ?? credentials.dbname ?? 'postgres';
  const user = encodeURIComponent(credentials.username);
  const password = encodeURIComponent(credentials.password);
  return `postgres://${user}:${password}@${host}:${port}/${encodeURIComponent(database)}`;
}

/**
 * Puts the current JWT key (JWT_SECRET_ARN: the plain secret string), the edge's origin-verify
 * value (ORIGIN_VERIFY_SECRET_ARN: plain string) and the Stripe keys (STRIPE_SECRET_ARN: JSON with
 * STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET; empty values count as unset) into the config,
 * reading each secret again once past its time-to-live. Called wherever one of them is used
 * (lib/http/edge.ts, lib/auth/jwt.ts, lib/billing/processor, lib/db/client.ts): within the TTL it
 * costs a lookup in Powertools' cache. A no-op when no ARN is set.
 */
export async function loadCloudSecrets(): Promise<void> {
  const { JWT_SECRET_ARN, ORIGIN_VERIFY_SECRET_ARN, STRIPE_SECRET_ARN } = config();
  if (!JWT_SECRET_ARN && !ORIGIN_VERIFY_SECRET_ARN && !STRIPE_SECRET_ARN) return;
  const [jwt, originVerify, stripe] = await Promise.all([
    JWT_SECRET_ARN ? readSecret(JWT_SECRET_ARN, SECRET_MAX_AGE_SECONDS.jwt) : undefined,
    ORIGIN_VERIFY_SECRET_ARN ? readSecret(ORIGIN_VERIFY_SECRET_ARN, SECRET_MAX_AGE_SECONDS.originVerify) : undefined,
    STRIPE_SECRET_ARN ? readSecret(STRIPE_SECRET_ARN, SECRET_MAX_AGE_SECONDS.stripe) : undefined,
  ]);
  const values: SecretValues = {};
  if (JWT_SECRET_ARN) values.JWT_SECRET = jwt || undefined;
  if (ORIGIN_VERIFY_SECRET_ARN) values.ORIGIN_VERIFY_SECRET = originVerify || undefined;
  if (STRIPE_SECRET_ARN) {
    const keys = JSON.parse(stripe!) as Record<string, unknown>;
    const named = (name: string) => (typeof keys[name] === 'string' && keys[name] !== '' ? keys[name] : undefined);
    values.STRIPE_SECRET_KEY = named('STRIPE_SECRET_KEY');
    values.STRIPE_WEBHOOK_SECRET = named('STRIPE_WEBHOOK_SECRET');
  }
  // The config is validated again only when a value changed (once per cold start, then per change).
  const current = config();
  if ((Object.keys(values) as (keyof SecretValues)[]).some((name) => values[name] !== current[name]))
    applySecrets(values);
}
