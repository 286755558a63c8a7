import { now } from '../clock';
import { isDeeplyFrozen } from '../frozen';
import type { RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest } from './types';

/**
 * The JSON of each deeply frozen answer already sent: it cannot have changed since. Weak: an entry
 * lives as long as its data (a profile cache entry), so the profile cache's bound is its bound.
 */
const serialized = new WeakMap<object, string>();

/**
 * JSON.stringify(data), made once for data that can never change (a shared cache entry,
 * lib/frozen.ts) and reused by every answer that carries it.
 */
function dataJson(data: unknown): string {
  if (!isDeeplyFrozen(data)) return JSON.stringify(data);
  let text = serialized.get(data);
  if (text === undefined) {
    text = JSON.stringify(data);
    serialized.set(data, text);
  }
  return text;
}

/** Wraps the handler's return value in `{ data, statusCode, timestamp }` with the route's status. */
export function responseEnvelope(route: RouteDefinition): ApiMiddleware {
  const after = (request: ApiRequest) => {
    const statusCode = route.successStatus;
    const headers = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };
    if (statusCode === 204) {
      request.response = { statusCode, headers: { 'Cache-Control': 'no-store' }, body: '' };
      return;
    }
    const timestamp = now().toISOString();
    const body =
      route.envelope === 'no-data'
        ? JSON.stringify({ statusCode, timestamp })
        : `{"data":${dataJson(request.response ?? null)},"statusCode":${statusCode},"timestamp":${JSON.stringify(timestamp)}}`;
    request.response = { statusCode, headers, body };
  };
  return { name: 'responseEnvelope', after };
}
