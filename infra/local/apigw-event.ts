import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { RouteDefinition } from '../../lib/http/route';

export interface HttpRequestLike {
  method: string;
  /** Path with the query string, as on the wire: /auth/tokens/abc?x=1 */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body?: string;
  /** The body is base64 of bytes that are not UTF-8 text, as API Gateway delivers a binary body. */
  bodyIsBase64?: boolean;
  sourceIp?: string;
  /** `url` already parsed against http://localhost (the local server has it): not parsed again. */
  parsedUrl?: URL;
}

/** Turns a route template into a matcher: /auth/tokens/{id} -> ^/auth/tokens/([^/]+)$ */
export function compileRoutePath(path: string): { pattern: RegExp; params: string[] } {
  const params: string[] = [];
  const segments = path.split('/').map((segment) => {
    const param = /^\{([A-Za-z0-9_]+)\}$/.exec(segment);
    if (!param) return segment.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
    params.push(param[1]!);
    return '([^/]+)';
  });
  return { pattern: new RegExp(`^${segments.join('/')}$`), params };
}

/**
 * Builds the API Gateway HTTP API (payload 2.0) event that Lambda would receive for this request,
 * so the local server and the tests invoke handlers exactly as the cloud does.
 */
export function buildApiGatewayEvent(
  route: RouteDefinition,
  request: HttpRequestLike,
  pathParameters: Record<string, string>,
): APIGatewayProxyEventV2 {
  const url = request.parsedUrl ?? new URL(request.url, 'http://localhost');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  const queryStringParameters: Record<string, string> = {};
  for (const [key, value] of url.searchParams) {
    queryStringParameters[key] = key in queryStringParameters ? `${queryStringParameters[key]},${value}` : value;
  }
  const at = new Date();
  const requestId = randomUUID();
  return {
    version: '2.0',
    routeKey: `${route.method} ${route.path}`,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(Object.keys(queryStringParameters).length > 0 ? { queryStringParameters } : {}),
    ...(route.path.includes('{') ? { pathParameters } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: request.method.toUpperCase(),
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: request.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: `${route.method} ${route.path}`,
      stage: '$default',
      time: at.toUTCString(),
      timeEpoch: at.getTime(),
    },
    body: request.body === undefined || request.body === '' ? undefined : request.body,
    isBase64Encoded: request.bodyIsBase64 === true,
  };
}

const ignoreCallback = () => {};

/** A Lambda context good enough for middy: request id and remaining time. */
export function buildLambdaContext(route: RouteDefinition, timeoutMs = 30_000): Context {
  const started = Date.now();
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: `local-${route.operationId}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${route.operationId}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/local-${route.operationId}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)),
    done: ignoreCallback,
    fail: ignoreCallback,
    succeed: ignoreCallback,
  };
}
