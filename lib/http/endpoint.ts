import middy from '@middy/core';
import httpCors from '@middy/http-cors';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type * as z from 'zod/mini';
import { config } from '../config';
import { connectDb } from '../db/client';
import { authenticate } from './authenticate';
import { errorEnvelope } from './error-envelope';
import { organizationContext } from './organization-context';
import { rateLimit } from './rate-limit';
import { requestContext } from './request-context';
import { responseEnvelope } from './response-envelope';
import type { RouteDefinition } from './route';
import type { Actor, ApiContext, ApiEvent, ApiMiddleware, ApiResult, OrganizationContext } from './types';
import { type RequestSchemas, validateRequest } from './validate';

type Parsed<S> = S extends z.ZodMiniType ? z.output<S> : undefined;
type Answer<S> = S extends z.ZodMiniType ? z.input<S> : unknown;

/** What a handler receives: validated input and who is calling, typed from its route and schemas. */
export interface HandlerInput<R extends RouteDefinition, S extends RequestSchemas> {
  body: Parsed<S['body']>;
  query: Parsed<S['query']>;
  path: Parsed<S['path']>;
  actor: R['auth'] extends 'bearer' ? Actor : R['auth'] extends 'none' ? undefined : Actor | undefined;
  organization: R['organization'] extends object ? OrganizationContext : OrganizationContext | undefined;
  requestId: string;
  ip: string;
  userAgent: string | undefined;
  /** Lowercased request headers. */
  headers: Record<string, string | undefined>;
  /** The body as sent, for routes with `rawBody` (the JSON parser is skipped there). */
  rawBody: string | undefined;
}

/**
 * middy's JSON body parser, skipped when there is no body: clients often send
 * `Content-Type: application/json` on GET and DELETE requests without one.
 */
function jsonBody(): ApiMiddleware {
  const parser = httpJsonBodyParser({ disableContentTypeError: true }) as ApiMiddleware;
  return {
    name: 'jsonBody',
    before: (request) => {
      const body = request.event.body;
      if (body === undefined || body === null || body === '') return;
      return parser.before!(request);
    },
  };
}

const connectDatabase = (): ApiMiddleware => ({
  name: 'connectDatabase',
  before: async () => {
    await connectDb();
  },
});

/**
 * Builds a Lambda handler for one route. The only place the middleware order is set:
 * headers -> request id -> CORS -> error envelope -> database -> auth -> rate limit -> JSON body
 * -> validation -> organization/role/plan -> handler -> response envelope.
 */
export function endpoint<R extends RouteDefinition, S extends RequestSchemas>(
  route: R,
  schemas: S,
  run: (input: HandlerInput<R, S>) => Promise<Answer<S['response']>>,
) {
  const origins = config()
    .CORS_ORIGINS.split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  const handler = middy<ApiEvent, ApiResult, Error, ApiContext>()
    .use(httpHeaderNormalizer())
    .use(requestContext())
    .use(httpCors({ origins, headers: 'Authorization,Content-Type,organization,X-Request-Id', exposeHeaders: 'X-Request-Id,Retry-After' }) as ApiMiddleware)
    .use(errorEnvelope())
    .use(connectDatabase())
    .use(authenticate(route))
    .use(rateLimit(route))
    .use(route.rawBody ? [] : [jsonBody()])
    .use(validateRequest(schemas))
    .use(organizationContext(route))
    .use(responseEnvelope(route))
    .handler(async (event, context) => {
      const { api } = context;
      const rawBody = route.rawBody && event.body !== undefined ? (event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body) : undefined;
      return (await run({
        body: api.body,
        query: api.query,
        path: api.path,
        actor: api.actor,
        organization: api.organization,
        requestId: api.requestId,
        ip: api.ip,
        userAgent: api.userAgent,
        headers: event.headers ?? {},
        rawBody,
      } as HandlerInput<R, S>)) as ApiResult;
    });
  // The OpenAPI builder and the contract tests read the route and its schemas from the handler.
  return Object.assign(handler, { definition: { route, schemas } });
}
