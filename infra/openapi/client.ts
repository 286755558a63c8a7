import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './generated/schema';

/**
 * The typed client for TypeScript consumers: openapi-fetch over the types openapi-typescript
 * generates from the OpenAPI document (`npm run openapi`). Paths, parameters (the `organization`
 * header included), bodies and answers are all typed from the document:
 *
 *   const api = createApiClient({ baseUrl: 'http://localhost:3000', token: () => session.accessToken });
 *   const { data, error } = await api.POST('/auth/login', { body: { email, password } });
 */
export type ApiPaths = paths;
export type ApiOperations = operations;
export type ApiSchemas = components['schemas'];
export type ApiClient = Client<paths>;

export interface ApiClientOptions {
  baseUrl: string;
  /** Bearer token sent on every request that has no Authorization header of its own. */
  token?: string | (() => string | undefined);
  /** A fetch to send requests with (defaults to the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const bearer: Middleware = {
    onRequest({ request }) {
      const token = typeof options.token === 'function' ? options.token() : options.token;
      if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };
  client.use(bearer);
  return client;
}
