import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { type ErrorDetail, ValidationFailedError } from './errors';
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPaths } from './storable-text';
import type { ApiEvent, ApiMiddleware, ApiRequest } from './types';

/**
 * The zod schemas of a route: its input (validated on every request) and the `data` of its
 * success answer (typed at compile time, checked by the contract tests, described in OpenAPI).
 */
export interface RequestSchemas {
  body?: z.ZodMiniType;
  query?: z.ZodMiniType;
  path?: z.ZodMiniType;
  response?: z.ZodMiniType;
}

// zod/mini ships without messages; load the English ones so error details read well. Importing
// the one locale (not z.locales) keeps the other 40 languages out of every Lambda bundle.
z.config(en());

/** Query string as an object; a repeated key becomes an array (`?tags=a&tags=b`). */
export function parseQuery(event: ApiEvent): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  const params = new URLSearchParams(event.rawQueryString ?? '');
  for (const [key, value] of params) {
    const existing = result[key];
    if (existing === undefined) result[key] = value;
    else result[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  // Events built by hand (tests, some proxies) carry only queryStringParameters.
  if (!event.rawQueryString && event.queryStringParameters) {
    for (const [key, value] of Object.entries(event.queryStringParameters))
      if (value !== undefined) result[key] = value;
  }
  return result;
}

type Issue = z.core.$ZodIssue;

/**
 * A union the input failed: when exactly one alternative accepted its type (its issues are all
 * inside it, the others refused it whole), that alternative's issues name the bad field
 * (`body.address.country`, not `body.address`).
 */
function withinUnion(issue: Issue): Issue[] {
  if (issue.code !== 'invalid_union' || !issue.errors?.length) return [issue];
  const matched = issue.errors.filter((branch) => branch.every((inner) => inner.path.length > 0));
  if (matched.length !== 1) return [issue];
  return matched[0]!.flatMap((inner) => withinUnion({ ...inner, path: [...issue.path, ...inner.path] } as Issue));
}

/**
 * Validates body, query and path against the route's schemas. Every bad field is reported at
 * once as `{ path: 'body.email', message }` under 400 VALIDATION_FAILED. Text Postgres cannot
 * store (NUL, lone surrogates) is refused on every route, whatever its schema says.
 */
export function validateRequest(schemas: RequestSchemas): ApiMiddleware {
  const before = (request: ApiRequest) => {
    const { event, context } = request;
    const details: ErrorDetail[] = [];
    const parts = {
      body: schemas.body && [schemas.body, event.body ?? undefined],
      query: schemas.query && [schemas.query, parseQuery(event)],
      path: schemas.path && [schemas.path, event.pathParameters ?? {}],
    } as const;
    for (const [location, entry] of Object.entries(parts)) {
      if (!entry) continue;
      const [schema, input] = entry as [z.ZodMiniType, unknown];
      for (const path of unstorableTextPaths(input, location)) details.push({ path, message: UNSTORABLE_TEXT_MESSAGE });
      const result = schema.safeParse(input);
      if (result.success) {
        context.api[location as 'body' | 'query' | 'path'] = result.data;
      } else {
        for (const issue of result.error.issues.flatMap(withinUnion)) {
          details.push({ path: [location, ...issue.path.map(String)].join('.'), message: issue.message });
        }
      }
    }
    if (details.length > 0) throw new ValidationFailedError(details);
  };
  return { name: 'validateRequest', before };
}
