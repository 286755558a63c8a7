import { config } from '../config';

/**
 * The CORS headers of the API, one list for every place that answers a browser: the Lambda
 * middleware (lib/http/endpoint.ts), API Gateway's preflight (infra/constructs/api.ts) and the
 * local server (infra/local/app.ts).
 */
export const CORS_HEADERS = {
  /** Request headers a browser may send. */
  allow: ['Authorization', 'Content-Type', 'organization', 'X-Request-Id', 'Idempotency-Key'],
  /** Response headers a browser may read. */
  expose: ['X-Request-Id', 'Retry-After', 'Idempotent-Replayed'],
} as const;

/** The origins a browser may call from (CORS_ORIGINS, comma-separated; `*` for any). */
export function corsOrigins(): string[] {
  return config()
    .CORS_ORIGINS.split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
}
