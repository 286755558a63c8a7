import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Scope } from '../auth/scopes';
import type { OrganizationRole } from '../organizations/roles';

/** Who is calling: the user and the session (sign-in, automation token or legacy token). */
export interface Actor {
  user: { id: string; email: string; name: string; isSuperAdmin: boolean; isEmailVerified: boolean };
  session: { id: string; kind: 'login' | 'automation' | 'legacy'; scopes: Scope[] | null };
}

export interface OrganizationContext {
  id: string;
  role: OrganizationRole;
  planActive: boolean;
}

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
