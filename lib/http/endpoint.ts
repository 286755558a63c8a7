import middy from '@middy/core';
import httpCors from '@middy/http-cors';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type * as z from 'zod/mini';
import type { AuditAction } from '../audit/actions';
import { auditActorOf, withAuditScope } from '../audit/scope';
import type { CaseContext } from '../cases/context';
import type { Actor } from '../auth/actor';
import { connectDb } from '../db/client';
import { lazyRetrying } from '../lazy';
import type { OrganizationContext } from '../organizations/context';
import { observability } from '../observability';
import { authenticate } from './authenticate';
import { caseContext } from './case-context';
import { compressAnswers } from './compression';
import { answerBeforeTimeout } from './deadline';
import { CORS_HEADERS, corsOrigins } from './cors';
import { errorEnvelope } from './error-envelope';
import { BadRequestError, ValidationFailedError } from './errors';
import { idempotency, replaysAnswer, takesIdempotencyKey } from './idempotency';
import { deliverLargeAnswers } from './large-answers';
import { organizationContext, usesOrganizationContext } from './organization-context';
import { requestBodyLimit } from './payload-limits';
import { rateLimit } from './rate-limit';
import { requestContext } from './request-context';
import { responseEnvelope } from './response-envelope';
import type { RouteDefinition } from './route';
import type { ApiContext, ApiEvent, ApiMiddleware, ApiResult } from './types';
import { type RequestSchemas, validateRequest } from './validate';

// Imported on the first evidence read, not at init (issue 35: cold starts).
const readEvents = lazyRetrying(() => import('../audit/read-events'));

type Parsed<S> = S extends z.ZodMiniType ? z.output<S> : undefined;
type Answer<S> = S extends z.ZodMiniType ? z.input<S> : unknown;

/** What a handler receives: validated input and who is calling, typed from its route and schemas. */
export interface HandlerInput<R extends RouteDefinition, S extends RequestSchemas> {
  body: Parsed<S['body']>;
  query: Parsed<S['query']>;
  path: Parsed<S['path']>;
  actor: R['auth'] extends 'bearer' ? Actor : R['auth'] extends 'none' ? undefined : Actor | undefined;
  organization: R['organization'] extends object ? OrganizationContext : OrganizationContext | undefined;
  /** The route's case, checked against its case rule (`case` on the entry). */
  caseContext: R['case'] extends object ? CaseContext : CaseContext | undefined;
  requestId: string;
  ip: string;
  userAgent: string | undefined;
  /** Lowercased request headers. */
  headers: Record<string, string | undefined>;
  /** The body as sent, for routes with `rawBody` (the JSON parser is skipped there). */
  rawBody: string | undefined;
}

/** The content types middy's parser reads as JSON: application/json and application/*+json. */
const JSON_CONTENT_TYPE = /^application\/([a-z0-9.+-]+\+)?json(;|$)/i;

/** Refuses bytes that are not UTF-8 rather than decoding them with U+FFFD; keeps a BOM, as before. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of a body API Gateway delivered base64-encoded (the local server too, for bytes that
 * are not UTF-8): JSON is UTF-8 text, so anything else is 400 MALFORMED_JSON, never text with
 * U+FFFD in place of the bad bytes that a route would then store.
 */
function utf8Body(base64: string): string {
  try {
    return strictUtf8.decode(Buffer.from(base64, 'base64'));
  } catch {
    throw new BadRequestError('The request body is not valid UTF-8, so it is not valid JSON', 'MALFORMED_JSON');
  }
}

/**
 * Keys that would reach an object's prototype if a consumer ever assigned them (`__proto__`, and
 * `constructor` whose `prototype` is shared): dropped at any depth, like any field the schemas do
 * not know, rather than refusing the body (JSON.parse's reviver deletes a key it answers undefined
 * for, and JSON.parse itself defines `__proto__` as a plain own key, never a prototype).
 */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor']);
const withoutPrototypeKeys = (key: string, value: unknown): unknown => (PROTOTYPE_KEYS.has(key) ? undefined : value);

/**
 * The JSON body, for any content type: clients send JSON as text/plain or with no type. Bytes that
 * are not UTF-8 are 400 MALFORMED_JSON whatever the type (utf8Body). With a JSON content type a
 * body that does not parse is 400 MALFORMED_JSON; with another type it stays text, which the
 * validation refuses. No body at all is skipped: clients often send `Content-Type:
 * application/json` on GET and DELETE. `null` is refused where the route reads a body.
 */
function jsonBody(readsBody: boolean): ApiMiddleware {
  return {
    name: 'jsonBody',
    before: (request) => {
      const { event } = request;
      if (event.body === undefined || event.body === null || event.body === '') return;
      if (event.isBase64Encoded) {
        event.body = utf8Body(event.body);
        event.isBase64Encoded = false;
      }
      try {
        event.body = JSON.parse(event.body, withoutPrototypeKeys);
      } catch {
        if (JSON_CONTENT_TYPE.test(event.headers?.['content-type'] ?? ''))
          throw new BadRequestError('The request body is not valid JSON', 'MALFORMED_JSON');
      }
      if (readsBody && event.body === null)
        throw new ValidationFailedError([{ path: 'body', message: 'Invalid input: expected object, received null' }]);
    },
  };
}

const hasInputSchemas = (schemas: RequestSchemas): boolean =>
  schemas.body !== undefined || schemas.query !== undefined || schemas.path !== undefined;

const connectDatabase = (): ApiMiddleware => ({
  name: 'connectDatabase',
  before: async () => {
    await connectDb();
  },
});

/**
 * The audit event of a read of case evidence: the case, and what was asked for (the validated path
 * and query: the thread, the search terms, the filters; opposing counsel's query only as its
 * parameter names and hash). Repeats within the read window are counted, not chained again
 * (lib/audit/read-events.ts).
 */
async function recordRead(action: AuditAction, api: ApiContext['api']): Promise<void> {
  const caseRow = api.caseContext?.case;
  const organizationId = caseRow?.organizationId ?? api.organization?.id;
  if (!organizationId) throw new Error(`Route auditing ${action} has no organization`);
  const { recordEvidenceRead } = await readEvents();
  return recordEvidenceRead({
    action,
    organizationId,
    caseId: caseRow?.id ?? null,
    path: (api.path ?? {}) as Record<string, unknown>,
    query: (api.query ?? {}) as Record<string, unknown>,
    opposingCounsel: api.caseContext?.access === 'opposing_counsel',
  });
}

/** The middleware in a list when the route needs it, else none: each one left out is a step less per request. */
const when = (needed: boolean, middleware: () => ApiMiddleware): ApiMiddleware[] => (needed ? [middleware()] : []);

/**
 * Builds a Lambda handler for one route. The only place the middleware order is set: the list
 * below, one line of why per step. middy runs each `before` top to bottom, then the handler, then
 * each `after` (or `onError`, whatever threw) bottom to top: a step lower in the list sees the
 * request later and the answer sooner. A step the route cannot use is left out (`when`), since it
 * would return at once: auth on an open route, the rate limit without `rateLimit`, validation
 * without input schemas, the organization without a rule or header, the case without a rule,
 * idempotency on reads.
 */
export function endpoint<R extends RouteDefinition, S extends RequestSchemas>(
  route: R,
  schemas: S,
  run: (input: HandlerInput<R, S>) => Promise<Answer<S['response']>>,
) {
  const origins = corsOrigins();
  const cors = httpCors({
    origins,
    headers: CORS_HEADERS.allow.join(','),
    exposeHeaders: CORS_HEADERS.expose.join(','),
  }) as ApiMiddleware;
  const handler = middy<ApiEvent, ApiResult, Error, ApiContext>()
    // Tracing and metrics: outermost, to see every cold start and the final answer.
    .use(observability<ApiEvent, ApiResult, ApiContext>())
    // Large answers (303 to a stored copy): measures the result as sent, compressed, with request id and CORS.
    .use(deliverLargeAnswers())
    // Lowercased header names: every step below reads them so.
    .use(httpHeaderNormalizer())
    // Request id, client IP, the edge's origin check: the logs and every answer, errors too, carry the id.
    .use(requestContext())
    // CORS headers on every answer, errors too, so a browser can read them.
    .use(cors)
    // Compression: outside the idempotency record, so a key stores the plain envelope and a replay is compressed anew.
    .use(compressAnswers())
    // Body size (413): before anything reads the body or the database is asked.
    .use(requestBodyLimit())
    // Database connection: every step below may query.
    .use(connectDatabase())
    // Auth (401/403): the caller, for the rate limit and every check below.
    .use(when(route.auth !== 'none', () => authenticate(route)))
    // Rate limit (429): after auth, so a signed-in caller counts as a user, not by a shared office IP.
    .use(when(route.rateLimit !== undefined, () => rateLimit(route)))
    // JSON body (400 MALFORMED_JSON): parsed for the validation; raw-body routes read the text.
    .use(when(!route.rawBody, () => jsonBody(schemas.body !== undefined)))
    // Validation (400): body, query and path typed for the steps below and the handler.
    .use(when(hasInputSchemas(schemas), () => validateRequest(schemas)))
    // Organization, role, plan (403): from the validated path or the header.
    .use(when(usesOrganizationContext(route), () => organizationContext(route)))
    // Case rule (403/404): the case of the validated path or query, within the organization.
    .use(when(route.case !== undefined, () => caseContext(route)))
    // Idempotency: claims after every check (a refused request stores nothing), records the final answer.
    .use(when(takesIdempotencyKey(route), () => idempotency(route)))
    // Error envelope (only onError): any thrown error becomes the answer before the steps above see it.
    .use(errorEnvelope(schemas))
    // Response envelope: wraps the handler's data first on the way out.
    .use(responseEnvelope(route))
    .handler(async (event, context) => {
      const { api } = context;
      // A replayed key: the stored answer takes the place of this one (lib/http/idempotency.ts).
      if (replaysAnswer(api)) return undefined as unknown as ApiResult;
      const rawBody =
        route.rawBody && event.body !== undefined
          ? event.isBase64Encoded
            ? Buffer.from(event.body, 'base64').toString('utf8')
            : event.body
          : undefined;
      const input = {
        body: api.body,
        query: api.query,
        path: api.path,
        actor: api.actor,
        organization: api.organization,
        caseContext: api.caseContext,
        requestId: api.requestId,
        ip: api.ip,
        userAgent: api.userAgent,
        headers: event.headers ?? {},
        rawBody,
      } as HandlerInput<R, S>;
      const scope = {
        actor: auditActorOf(api.actor),
        ip: api.ip,
        userAgent: api.userAgent ?? null,
        requestId: api.requestId,
        clientRequestId: api.clientRequestId ?? null,
      };
      return withAuditScope(scope, async () => {
        const answer = await run(input);
        if (route.audit && 'read' in route.audit) await recordRead(route.audit.action, api);
        return answer as ApiResult;
      });
    });
  // The OpenAPI builder and the contract tests read the route and its schemas from the handler.
  return Object.assign(answerBeforeTimeout(handler), { definition: { route, schemas } });
}
