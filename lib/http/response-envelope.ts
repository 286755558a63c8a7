import { now } from '../clock';
import type { RouteDefinition } from './route';
import type { ApiMiddleware, ApiRequest } from './types';

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
    const payload =
      route.envelope === 'no-data'
        ? { statusCode, timestamp }
        : { data: request.response ?? null, statusCode, timestamp };
    request.response = { statusCode, headers, body: JSON.stringify(payload) };
  };
  return { name: 'responseEnvelope', after };
}
