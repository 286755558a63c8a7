import { AsyncLocalStorage } from 'node:async_hooks';
import type { Actor } from '../auth/actor';
import type { AuditActorType } from './actions';

export interface AuditActor {
  type: AuditActorType;
  userId: string | null;
  /** The session or token the actor called with. */
  tokenId: string | null;
}

/** Who is acting and through which request: what every event recorded while it runs carries. */
export interface AuditScope {
  actor: AuditActor;
  ip: string | null;
  userAgent: string | null;
  /** The service's own id of the request (or command): never one a client chose. */
  requestId: string | null;
  /**
   * The client's X-Request-Id, when it sent a sane one (lib/http/request-context.ts): stored as the
   * event's `clientRequestId`, beside the chain (not hashed), apart from the service's `requestId`.
   */
  clientRequestId?: string | null;
}

/** The service itself: maintenance, the payment processor's webhooks. */
export const SYSTEM_ACTOR: AuditActor = { type: 'system', userId: null, tokenId: null };

/** The system outside any request: what events recorded by maintenance (or with no scope) carry. */
export const SYSTEM_SCOPE: AuditScope = {
  actor: SYSTEM_ACTOR,
  ip: null,
  userAgent: null,
  requestId: null,
};

const scopes = new AsyncLocalStorage<AuditScope>();

/** Runs `work` with `scope` as the source of every event it records (the endpoint, the admin CLI). */
export function withAuditScope<T>(scope: AuditScope, work: () => T): T {
  return scopes.run(scope, work);
}

/** The scope of the running request or command; the system (maintenance, webhooks) outside any. */
export function currentAuditScope(): AuditScope {
  return scopes.getStore() ?? SYSTEM_SCOPE;
}

const ACTOR_TYPE_OF_SESSION = { login: 'user', automation: 'automation_token', legacy: 'legacy_token' } as const;

/** The audit actor of a signed-in caller; `anonymous` without one. */
export function auditActorOf(actor: Actor | undefined): AuditActor {
  if (!actor) return { type: 'anonymous', userId: null, tokenId: null };
  return { type: ACTOR_TYPE_OF_SESSION[actor.session.kind], userId: actor.user.id, tokenId: actor.session.id };
}

/**
 * A user who proved who they are without a bearer token (password, refresh token, emailed link):
 * the actor of an event on a route that has no caller yet; `tokenId` the session it opens or uses.
 */
export const provenUser = (userId: string, tokenId: string | null = null): AuditActor => ({
  type: 'user',
  userId,
  tokenId,
});

/** Staff (the admin CLI, super-admin routes): shown as `staff`, never naming who. */
export const STAFF_ACTOR: AuditActor = { type: 'staff', userId: null, tokenId: null };
