import type { IdempotencyClaim, StoredAnswer } from '../idempotency';
import { lazyRetrying } from '../lazy';
import { logger } from '../log';
import { addressGroup } from '../rate-limit/address-group';
import { ValidationFailedError } from './errors';
import { functionTimeoutSeconds, type RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest, ApiState } from './types';

// Imported on the first request that needs it, not at init (issue 35: cold starts).
const keys = lazyRetrying(() => import('../idempotency'));

const WRITE_METHODS = new Set(['POST', 'PATCH', 'DELETE']);

/**
 * Writes accept an `Idempotency-Key` (the API description declares it from this too), except the
 * routes of a credential (`credential` on the entry), which ignore it: each request runs.
 */
export function takesIdempotencyKey(route: RouteDefinition): boolean {
  return WRITE_METHODS.has(route.method) && route.credential !== true;
}
/** 1 to 255 printable ASCII characters (Stripe allows 255). */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;
/** Added to the function timeout before a running claim lapses: the answer is on its way by then. */
const LOCK_MARGIN_SECONDS = 5;
/** The answer headers worth replaying; X-Request-Id and CORS are the replaying request's own. */
const STORED_HEADERS = ['content-type', 'location', 'cache-control', 'retry-after'];

/**
 * What a request sent with an `Idempotency-Key` holds: the claim it took (the handler runs and its
 * answer is stored) or the answer it replays (the handler does not run).
 */
export type IdempotencyState = { claim: IdempotencyClaim } | { replay: StoredAnswer };

/**
 * The whole of `Idempotency-Key` on a write, in one middleware (Stripe's rules). Its place in
 * lib/http/endpoint.ts does the rest: `.use`d after every check and just outside the error
 * envelope, its `before` runs last before the handler and its `after`/`onError` as soon as the
 * answer is final (the success or error envelope), before compression.
 * - before: claims the key for the caller and route, or finds the stored answer to replay; another
 *   request under the key throws 409 (REUSED, IN_USE), a malformed key 400. A request refused
 *   earlier (auth, rate limit, validation, organization or case rule) never gets here: it stores
 *   nothing.
 * - after/onError: stores the answer for a claimed key (a 5xx or 429 gives the key back, so a retry
 *   runs again), or puts the stored answer in place of a replay with `Idempotent-Replayed: true`.
 *   A failure to store is logged and never changes the answer.
 * A replay does not end the chain in `before`: middy skips every `after` and `onError` then, and
 * the replay would lose compression, the request id, CORS and the large-answer check. The handler
 * skips a replay instead (`replaysAnswer`).
 */
export function idempotency(route: RouteDefinition): ApiMiddleware {
  const lockSeconds = functionTimeoutSeconds(route) + LOCK_MARGIN_SECONDS;
  const claim = async (request: ApiRequest) => {
    if (!takesIdempotencyKey(route)) return;
    const rawKey = request.event.headers?.['idempotency-key'];
    if (rawKey === undefined) return;
    if (!VALID_KEY.test(rawKey))
      throw new ValidationFailedError([
        { path: 'headers.idempotency-key', message: 'Must be 1 to 255 printable ASCII characters' },
      ]);
    const { api } = request.context;
    // Anonymous keys belong to the client that sent them: a predictable key never meets another client's.
    const scope = api.actor ? `user:${api.actor.user.id}` : `anonymous:${addressGroup(api.ip)}`;
    const { canonicalHash, claimIdempotencyKey } = await keys();
    const fingerprint = canonicalHash({
      method: route.method,
      route: route.operationId,
      path: api.path ?? null,
      query: api.query ?? null,
      body: route.rawBody ? (request.event.body ?? null) : (api.body ?? null),
      organization: request.event.headers?.organization ?? null,
    });
    const outcome = await claimIdempotencyKey({ scope, route: route.operationId, rawKey, fingerprint, lockSeconds });
    api.idempotency = outcome.kind === 'claimed' ? { claim: outcome.claim } : { replay: outcome.answer };
  };
  const settle = async (request: ApiRequest) => {
    const state = request.context.api?.idempotency;
    if (!state) return;
    if ('replay' in state) {
      const { statusCode, headers, body } = state.replay;
      request.response = { statusCode, headers: { ...headers, 'Idempotent-Replayed': 'true' }, body };
      return;
    }
    // Settled once: an after that fails would otherwise come back through onError.
    request.context.api.idempotency = undefined;
    const answer = storable(request.response);
    try {
      const { recordIdempotentAnswer, releaseIdempotencyKey } = await keys();
      if (answer.statusCode >= 500 || answer.statusCode === 429) await releaseIdempotencyKey(state.claim);
      else await recordIdempotentAnswer(state.claim, answer);
    } catch (error) {
      logger.error('idempotency answer not recorded', { error });
    }
  };
  return { name: 'idempotency', before: claim, after: settle, onError: settle };
}

/** Whether the request replays a stored answer: its handler does not run (the answer is already known). */
export function replaysAnswer(api: ApiState): boolean {
  return api.idempotency !== undefined && 'replay' in api.idempotency;
}

function storable(response: ApiRequest['response']): StoredAnswer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response?.headers ?? {}))
    if (STORED_HEADERS.includes(name.toLowerCase())) headers[name] = String(value);
  return { statusCode: response?.statusCode ?? 200, headers, body: response?.body ?? '' };
}
