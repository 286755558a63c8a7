import { applySecrets, config } from '../config';
import { traced } from '../observability/tracing';

/**
 * Cloud only: secrets read from AWS Secrets Manager once per Lambda cold start. The CDK stack
 * (infra/) gives each function the ARNs it may read (DATABASE_SECRET_ARN, JWT_SECRET_ARN,
 * ORIGIN_VERIFY_SECRET_ARN, STRIPE_SECRET_ARN); locally none is set, nothing here runs and the
 * SDK is never loaded. `@aws-sdk/client-secrets-manager` is provided by the Lambda runtime
 * (bundles mark `@aws-sdk/*` external) and imported on first use only.
 */

type Send = (secretId: string) => Promise<string>;

let send: Send | undefined;
const cache = new Map<string, Promise<string>>();

/** The secret's string value; cached per process, a failed read is retried on the next call. */
export function readSecret(secretId: string): Promise<string> {
  let value = cache.get(secretId);
  if (!value) {
    send ??= defaultSend();
    value = send(secretId);
    cache.set(secretId, value);
    value.catch(() => cache.delete(secretId));
  }
  return value;
}

function defaultSend(): Send {
  let client: Promise<{ send: Send }> | undefined;
  return async (secretId) => {
    client ??= import('@aws-sdk/client-secrets-manager').then(({ SecretsManagerClient, GetSecretValueCommand }) => {
      const sdk = traced(new SecretsManagerClient({}));
      return {
        async send(id: string) {
          const { SecretString } = await sdk.send(new GetSecretValueCommand({ SecretId: id }));
          if (SecretString === undefined) throw new Error(`Secret ${id} has no string value`);
          return SecretString;
        },
      };
    });
    return (await client).send(secretId);
  };
}

/** Tests read secrets from a map instead of AWS. */
export function useSecretReader(reader: Send | undefined): void {
  send = reader;
  cache.clear();
  loaded = undefined;
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

let loaded: Promise<void> | undefined;

/**
 * Reads the JWT key (JWT_SECRET_ARN: the plain secret string), the edge's origin-verify value
 * (ORIGIN_VERIFY_SECRET_ARN: plain string) and the Stripe keys (STRIPE_SECRET_ARN: JSON with
 * STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET; empty values are ignored) in parallel and puts them
 * into the config. Runs once, before the first request is checked (lib/http/edge.ts) or the first
 * database connection of a cold start; a no-op when no ARN is set.
 */
export function loadCloudSecrets(): Promise<void> {
  loaded ??= (async () => {
    const { JWT_SECRET_ARN, ORIGIN_VERIFY_SECRET_ARN, STRIPE_SECRET_ARN } = config();
    const [jwt, originVerify, stripe] = await Promise.all([
      JWT_SECRET_ARN ? readSecret(JWT_SECRET_ARN) : undefined,
      ORIGIN_VERIFY_SECRET_ARN ? readSecret(ORIGIN_VERIFY_SECRET_ARN) : undefined,
      STRIPE_SECRET_ARN ? readSecret(STRIPE_SECRET_ARN) : undefined,
    ]);
    const values: Record<string, string> = {};
    if (jwt) values.JWT_SECRET = jwt;
    if (originVerify) values.ORIGIN_VERIFY_SECRET = originVerify;
    if (stripe) {
      for (const [name, value] of Object.entries(JSON.parse(stripe) as Record<string, unknown>)) {
        if (name.startsWith('STRIPE_') && typeof value === 'string' && value !== '') values[name] = value;
      }
    }
    if (Object.keys(values).length > 0) applySecrets(values);
  })();
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}
