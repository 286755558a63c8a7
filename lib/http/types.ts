import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Actor } from '../auth/actor';
import type { CaseContext } from '../cases/context';
import type { OrganizationContext } from '../organizations/context';
import type { IdempotencyState } from './idempotency';

/** What the middleware learns about a request, handed to the handler. */
export interface ApiState {
  /** The service's own id of the request (lib/http/request-context.ts). */
  requestId: string;
  /** The client's x-request-id when sane: echoed in answers, kept beside the audit chain. */
  clientRequestId?: string;
  ip: string;
  userAgent: string | undefined;
  actor?: Actor;
  organization?: OrganizationContext;
  /** The case of a route with a case rule, checked against it (lib/http/case-context.ts). */
  caseContext?: CaseContext;
  body?: unknown;
  query?: unknown;
  path?: unknown;
  /** A write sent with an `Idempotency-Key`: the key it claimed, or the stored answer it replays. */
  idempotency?: IdempotencyState;
}

export type ApiContext = Context & { api: ApiState };
export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyStructuredResultV2;
export type ApiRequest = Request<ApiEvent, ApiResult, Error, ApiContext>;
export type ApiMiddleware = MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext>;
