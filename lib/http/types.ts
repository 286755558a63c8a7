import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Actor } from '../auth/actor';
import type { OrganizationContext } from '../organizations/context';

// Their homes are the domains; re-exported while callers move (issue 14).
export type { Actor, OrganizationContext };

/** What the middleware learns about a request, handed to the handler. */
export interface ApiState {
  requestId: string;
  ip: string;
  userAgent: string | undefined;
  actor?: Actor;
  organization?: OrganizationContext;
  body?: unknown;
  query?: unknown;
  path?: unknown;
}

export type ApiContext = Context & { api: ApiState };
export type ApiEvent = APIGatewayProxyEventV2;
export type ApiResult = APIGatewayProxyStructuredResultV2;
export type ApiRequest = Request<ApiEvent, ApiResult, Error, ApiContext>;
export type ApiMiddleware = MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext>;
