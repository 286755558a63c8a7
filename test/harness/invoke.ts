import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect } from 'vitest';
import type * as z from 'zod/mini';
import { asDelivered, eventTooLarge, MAX_URL_BYTES } from '../../infra/local/lambda-limits';
import { errorResponse } from '../../lib/http/error-envelope';
import { MAX_REQUEST_BODY_BYTES } from '../../lib/http/payload-limits';
import type { RouteDefinition } from '../../lib/http/route';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { type LambdaHandler, loadHandler } from '../../infra/local/router';
import type { RequestSchemas } from '../../lib/http/validate';

export interface InvokeOptions {
  body?: unknown;
  /** Sent as is (for malformed JSON); wins over `body`. */
  rawBody?: string;
  token?: string;
  organization?: string;
  path?: Record<string, string>;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  /**
   * The client address. Unset: 203.0.113.10, except on a route with a shared per-client limit
   * (`rateLimit.shared`, the enumeration routes that createUser calls through register), where each
   * request gets an address of its own, so a test file may register more than 10 users a minute;
   * tests of that limit send `ip`.
   */
  ip?: string;
}

/** The harness's own client addresses for requests that do not say (198.18.0.0/15, benchmarking). */
let anonymousClients = 0;
function defaultSourceIp(route: RouteDefinition): string {
  if (!route.rateLimit?.shared) return DEFAULT_SOURCE_IP;
  anonymousClients += 1;
  return `198.${18 + ((anonymousClients >> 16) & 1)}.${(anonymousClients >> 8) & 255}.${anonymousClients & 255}`;
}
export const DEFAULT_SOURCE_IP = '203.0.113.10';

export interface InvokeResult<T = any> {
  status: number;
  headers: Record<string, string>;
  body: T;
}

/** The request target (path and query) `invoke` sends for these options. */
export function requestTarget(route: RouteDefinition, options: InvokeOptions = {}): string {
  const pathname = route.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => {
    const value = options.path?.[name];
    if (value === undefined) throw new Error(`invoke: missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(options.query ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, item);
  }
  const query = search.toString();
  return `${pathname}${query ? `?${query}` : ''}`;
}

/** Invokes a route's real handler with the API Gateway event Lambda would get. */
export async function invoke<T = any>(route: RouteDefinition, options: InvokeOptions = {}): Promise<InvokeResult<T>> {
  const url = requestTarget(route, options);
  const headers: Record<string, string> = { 'user-agent': 'vitest', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.organization) headers.organization = options.organization;
  const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const event = buildApiGatewayEvent(
    route,
    {
      method: route.method,
      url,
      headers,
      body,
      sourceIp: options.ip ?? defaultSourceIp(route),
    },
    options.path ?? {},
  );
  const handler = (await loadHandler(route)) as LambdaHandler & { definition?: { schemas: RequestSchemas } };
  // The limits of the cloud, in the local server's order (infra/local/lambda-limits.ts): a request
  // target over the URL limit is 414; a body over the request limit, or an event Lambda would refuse,
  // is 413; a result over Lambda's limit is the gateway's bare 500.
  const result =
    Buffer.byteLength(url) > MAX_URL_BYTES
      ? errorResponse({
          status: 414,
          code: 'URI_TOO_LONG',
          message: `The URL is longer than ${MAX_URL_BYTES} bytes`,
          requestId: event.requestContext.requestId,
        })
      : (body !== undefined && Buffer.byteLength(body) > MAX_REQUEST_BODY_BYTES) || eventTooLarge(event)
        ? errorResponse({
            status: 413,
            code: 'PAYLOAD_TOO_LARGE',
            message: `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`,
            requestId: event.requestContext.requestId,
          })
        : asDelivered(await handler(event, buildLambdaContext(route)));
  const responseHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) responseHeaders[name.toLowerCase()] = String(value);
  const text = result.isBase64Encoded
    ? decoded(Buffer.from(result.body ?? '', 'base64'), responseHeaders['content-encoding'])
    : result.body;
  const parsed = text ? JSON.parse(text) : undefined;
  // Every success answer the suite sees must match the route's declared response schema.
  const responseSchema = handler.definition?.schemas.response;
  if (responseSchema && (result.statusCode ?? 200) < 300) {
    const check = responseSchema.safeParse(parsed?.data);
    if (!check.success)
      throw new Error(
        `${route.operationId} answered data that does not match its response schema: ${check.error.message}`,
      );
  }
  return { status: result.statusCode ?? 200, headers: responseHeaders, body: parsed };
}

/** A compressed answer's text (as a client decodes it by its Content-Encoding). */
function decoded(bytes: Buffer, encoding: string | undefined): string {
  if (encoding === 'gzip') return gunzipSync(bytes).toString('utf8');
  if (encoding === 'br') return brotliDecompressSync(bytes).toString('utf8');
  return bytes.toString('utf8');
}

type Schema = z.ZodMiniType;
type Input<S> = S extends Schema ? z.input<S> : never;
/** The keys of a path or query schema, with values as they travel: text. */
type WireParams<S, V> = S extends Schema ? { [K in keyof z.input<S>]: V } : never;

/** The request options, typed from a handler's schemas: the body as `z.input`, path and query keys from theirs. */
export type TypedInvokeOptions<S extends RequestSchemas> = Omit<InvokeOptions, 'body' | 'path' | 'query'> & {
  body?: Input<S['body']>;
  path?: WireParams<S['path'], string>;
  query?: Partial<WireParams<S['query'], string | string[]>>;
};

/** The success envelope of a handler, `data` typed from its response schema. */
export interface Envelope<S extends RequestSchemas> {
  statusCode: number;
  timestamp: string;
  data: S['response'] extends Schema ? z.output<S['response']> : unknown;
  [key: string]: any;
}

/** A handler module's `handler`: the route and schemas it was built with (lib/http/endpoint.ts). */
export interface TypedHandler<S extends RequestSchemas> {
  definition: { route: RouteDefinition; schemas: S };
}

/**
 * `invoke` typed from the handler: `invokeHandler(handler, { body })` (import `handler` from the
 * route's module under functions/) checks the request against its schemas' input types at compile
 * time, and types the answer's `data` from its response schema.
 */
export function invokeHandler<S extends RequestSchemas>(
  handler: TypedHandler<S>,
  options: TypedInvokeOptions<S> = {},
): Promise<InvokeResult<Envelope<S>>> {
  return invoke(handler.definition.route, options as InvokeOptions);
}

/** Asserts the error envelope: status, code, and (optionally) the fields named in details. */
export function expectError(result: InvokeResult, status: number, code: string, fields?: string[]): void {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body).toMatchObject({ statusCode: status, error: { code } });
  expect(typeof result.body.timestamp).toBe('string');
  expect(result.body).toHaveProperty('requestId');
  if (fields) {
    const paths = (result.body.error.details ?? []).map((d: { path: string }) => d.path);
    for (const field of fields) expect(paths).toContain(field);
  }
}

/** Asserts the success envelope and returns `data`. */
export function expectData<T = any>(result: InvokeResult, status = 200): T {
  expect(result.status, JSON.stringify(result.body)).toBe(status);
  expect(result.body).toMatchObject({ statusCode: status });
  expect(Number.isNaN(Date.parse(result.body.timestamp))).toBe(false);
  return result.body.data as T;
}
