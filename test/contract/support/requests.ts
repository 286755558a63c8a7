import { randomUUID } from 'node:crypto';
import type { Json, RouteWithSchemas } from '../../../infra/openapi/document';
import { pathParameterNames, takesOrganizationHeader } from '../../../infra/openapi/statuses';
import { unstorableTextPaths } from '../../../lib/http/storable-text';
import { IdText } from '../../../schemas/common/fields';
import type { InvokeOptions } from '../../harness/invoke';

/**
 * Requests built from the OpenAPI document: the smallest request an operation accepts (required
 * fields only, each the simplest value its schema allows), so tests reach the layers after input
 * validation on every route of the table without knowing any route.
 */

/** A schema with its `$ref` followed (siblings such as `default` kept). */
export function resolveSchema(document: Json, schema: Json | undefined): Json {
  let current: Json = schema ?? {};
  for (let depth = 0; typeof current.$ref === 'string' && depth < 20; depth++) {
    const { $ref, ...siblings } = current;
    const target = ($ref as string)
      .replace(/^#\//, '')
      .split('/')
      .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<Json | undefined>((node, key) => node?.[key], document);
    if (!target) throw new Error(`Unresolved ${$ref}`);
    current = { ...target, ...siblings };
  }
  return current;
}

const STRING_CANDIDATES = ['sample', 'a', '1', '+1 555 0100', 'abc-1', 'A1', 'image/jpeg'];

function sampleString(schema: Json): string {
  switch (schema.format) {
    case 'email':
      return 'sample@example.com';
    case 'uuid':
      return randomUUID();
    case 'date-time':
      return new Date().toISOString();
    case 'uri':
    case 'url':
      return 'https://example.com/return';
  }
  const min = (schema.minLength as number | undefined) ?? 0;
  const max = (schema.maxLength as number | undefined) ?? Number.POSITIVE_INFINITY;
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
  const fits = (value: string) => value.length >= min && value.length <= max && (!pattern || pattern.test(value));
  const found = [...STRING_CANDIDATES, 'a'.repeat(Math.max(min, 1))].find(fits);
  if (found === undefined) throw new Error(`No sample string for ${JSON.stringify(schema)}`);
  return found;
}

function sampleNumber(schema: Json, integer: boolean): number {
  const minimum =
    (schema.minimum as number | undefined) ??
    (schema.exclusiveMinimum !== undefined ? (schema.exclusiveMinimum as number) + 1 : 1);
  const maximum = (schema.maximum as number | undefined) ?? Number.MAX_SAFE_INTEGER;
  const value = Math.min(Math.max(minimum, 1), maximum);
  return integer ? Math.ceil(value) : value;
}

/**
 * The simplest value a JSON Schema accepts: required properties only, empty arrays where allowed,
 * the last value of an enum (the least privileged role, the narrowest access), the first branch of
 * a union that is not null.
 */
export function sampleValue(document: Json, input: Json | undefined, depth = 0): unknown {
  if (depth > 30) throw new Error('Schema too deep to sample');
  const schema = resolveSchema(document, input);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.at(-1);
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[key])) {
      const options = schema[key] as Json[];
      const branch = options.find((o) => resolveSchema(document, o).type !== 'null') ?? options[0];
      return sampleValue(document, branch, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...schema.allOf.map((part: Json) => sampleValue(document, part, depth + 1)));
  }
  const type = Array.isArray(schema.type)
    ? (schema.type as string[]).find((t) => t !== 'null')
    : (schema.type as string | undefined);
  switch (type) {
    case 'object': {
      const result: Record<string, unknown> = {};
      for (const name of (schema.required as string[] | undefined) ?? []) {
        result[name] = sampleValue(document, (schema.properties as Record<string, Json>)[name], depth + 1);
      }
      return result;
    }
    case 'array': {
      const count = (schema.minItems as number | undefined) ?? 0;
      return Array.from({ length: count }, () => sampleValue(document, schema.items as Json, depth + 1));
    }
    case 'string':
      return sampleString(schema);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}

/** Whom a request acts for: the organization it names (path orgId, header) and that organization's slug. */
export interface RequestSubject {
  organizationId: string;
  organizationSlug: string;
}

/** A path parameter's value: the subject organization for orgId and slug, a fresh uuid otherwise. */
export function pathValue(name: string, subject: RequestSubject): string {
  if (name === 'orgId') return subject.organizationId;
  if (name === 'slug') return subject.organizationSlug;
  return randomUUID();
}

export interface Operation {
  path: string;
  method: string;
  operation: Json;
}

/** Index of the document's operations by operation id. */
export function operationsById(document: Json): Map<string, Operation> {
  const result = new Map<string, Operation>();
  for (const [path, item] of Object.entries(document.paths as Record<string, Json>)) {
    for (const [method, operation] of Object.entries(item))
      result.set(operation.operationId, { path, method, operation });
  }
  return result;
}

/** The smallest valid request of an operation (no credentials), built from the document. */
export function validRequest(document: Json, definition: RouteWithSchemas, subject: RequestSubject): InvokeOptions {
  const { route } = definition;
  const entry = operationsById(document).get(route.operationId);
  if (!entry) throw new Error(`${route.operationId} is not in the document`);
  const parameters = (entry.operation.parameters ?? []) as Json[];
  const path: Record<string, string> = {};
  for (const name of pathParameterNames(route.path)) path[name] = pathValue(name, subject);
  const query: Record<string, string | string[]> = {};
  for (const parameter of parameters.filter((p) => p.in === 'query' && p.required)) {
    const value = sampleValue(document, parameter.schema);
    query[parameter.name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  const headers: Record<string, string> = {};
  for (const parameter of parameters.filter((p) => p.in === 'header' && p.required && p.name !== 'organization')) {
    headers[parameter.name.toLowerCase()] = String(sampleValue(document, parameter.schema));
  }
  const media = entry.operation.requestBody?.content?.['application/json'] as Json | undefined;
  const body = media && entry.operation.requestBody.required ? sampleValue(document, media.schema) : undefined;
  return {
    ...(Object.keys(path).length ? { path } : {}),
    ...(Object.keys(query).length ? { query } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
    ...(body !== undefined ? { body } : {}),
    ...(takesOrganizationHeader(route) ? { organization: subject.organizationId } : {}),
  };
}

/**
 * The body the validation sees, as lib/http/endpoint.ts parses it: JSON whatever the content type
 * when it parses; otherwise MALFORMED_JSON under a JSON content type, and the text itself under
 * another one (which the schema then refuses).
 */
function parsedBody(request: InvokeOptions): { body: unknown } | { malformed: true } {
  const text = request.rawBody ?? (request.body === undefined ? undefined : JSON.stringify(request.body));
  if (text === undefined || text === '') return { body: undefined };
  try {
    // As the service reads it: `__proto__` and `constructor` keys dropped at any depth (lib/http/endpoint.ts).
    return {
      body: JSON.parse(text, (key, value) => (key === '__proto__' || key === 'constructor' ? undefined : value)),
    };
  } catch {
    // invoke() sends application/json when the request names no content type.
    const contentType =
      Object.entries(request.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ??
      'application/json';
    return /^application\/([a-z0-9.+-]+\+)?json(;|$)/i.test(contentType) ? { malformed: true } : { body: text };
  }
}

/** Which parts of a request its route's own schemas (the ones the handler validates with) refuse. */
export function invalidParts(definition: RouteWithSchemas, request: InvokeOptions): string[] {
  const { route, schemas } = definition;
  const parts: string[] = [];
  let body: unknown;
  // A rawBody route gets the body unparsed; no schema looks at it.
  if (!route.rawBody) {
    const parsed = parsedBody(request);
    if ('malformed' in parsed) parts.push('body (not JSON)');
    else body = parsed.body;
  }
  if (schemas.body && body === null) parts.push('body (null)');
  if (schemas.body && !parts.length && !schemas.body.safeParse(body).success) parts.push('body');
  if (schemas.query) {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(request.query ?? {}))
      for (const item of Array.isArray(value) ? value : [value]) search.append(key, item);
    const query: Record<string, string | string[]> = {};
    for (const [key, value] of search) {
      const existing = query[key];
      query[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
    }
    if (!schemas.query.safeParse(query).success) parts.push('query');
  }
  if (schemas.path && !schemas.path.safeParse(request.path ?? {}).success) parts.push('path');
  // lib/http/validate.ts refuses text Postgres cannot store in any part it validates, whatever the schema says.
  for (const [part, value] of [
    ['body', schemas.body && body],
    ['query', schemas.query && request.query],
    ['path', schemas.path && request.path],
  ] as const) {
    if (unstorableTextPaths(value, part).length > 0 && !parts.includes(part)) parts.push(`${part} (unstorable text)`);
  }
  if (
    takesOrganizationHeader(route) &&
    !IdText.safeParse(request.organization ?? request.headers?.organization).success
  )
    parts.push('headers.organization');
  return parts;
}
