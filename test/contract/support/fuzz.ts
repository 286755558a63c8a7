import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Json, RouteWithSchemas } from '../../../infra/openapi/document';
import { pathParameterNames, takesOrganizationHeader } from '../../../infra/openapi/statuses';
import { MAX_ID_LENGTH } from '../../../schemas/common/fields';
import type { InvokeOptions } from '../../harness/invoke';
import { operationsById, resolveSchema } from './requests';

/**
 * Malformed requests for one operation, made from its valid request by one or more mutations of
 * what the document says it takes: body (wrong types, missing and unknown fields, huge strings,
 * unicode, not JSON at all, other content types), query (bad paging values, bad enums and lists),
 * path (malformed ids), the organization header, and the bearer token. Some mutations leave the
 * request acceptable (an unknown field, a short malformed id, JSON sent as text/plain): those are
 * sent too, and must be answered as the tolerant reader says.
 */
export type Mutation = (request: InvokeOptions) => InvokeOptions;

const unicode = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 });
/** Short text with a NUL character inside: fits every length limit, and Postgres cannot store it. */
const withNul = fc
  .tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }))
  .map(([before, after]) => `${before}\u0000${after}`);
const huge = fc
  .integer({ min: 1_000, max: 120_000 })
  .chain((length) => fc.constantFrom('x', 'é', '𝕏', '\u0000', ' ').map((c) => c.repeat(length)));

/** Text that is wrong wherever an id, a number, a flag or an enum is expected. */
const badText = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1.5',
    '1e3',
    'NaN',
    'Infinity',
    '99999999999999999999',
    'abc',
    'null',
    'undefined',
    'true ',
    '[]',
    '{}',
    '../../etc/passwd',
    '%00',
    "' OR 1=1 --",
    '<script>alert(1)</script>',
    '１２',
    '٣',
    '01a2028b-8234-78ea-a301-3af91dee41ca-x',
    '01a2028b82344',
    'g1a2028b-8234-78ea-a301-3af91dee41ca',
  ),
  fc.string({ maxLength: 30 }),
  unicode,
  huge,
);

/** Any JSON value (for wrong types). */
const anyJson = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 20 }),
  unicode,
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.integer(), { maxKeys: 3 }),
);

const notJson = fc.oneof(
  fc.constantFrom('{', '{"a":', '[1,', "{'a': 1}", 'undefined', '{"a":1}}', '\u0000', 'nul', '{"a":1,}', '\uFEFF{'),
  fc.string({ minLength: 1, maxLength: 40 }).filter((text) => {
    try {
      JSON.parse(text);
      return false;
    } catch {
      return true;
    }
  }),
);

const badAuthorization = fc.oneof(
  fc.constantFrom(
    'Bearer',
    'Bearer ',
    'Basic dXNlcjpwYXNz',
    'bearer  ',
    'Bearer a b',
    'Bearer eyJhbGciOiJub25lIn0.e30.',
    'Bearer cebs_at_',
    'Bearer cebs_lt_x',
    'Token abc',
  ),
  fc.string({ maxLength: 60 }).map((s) => `Bearer ${s.trim() || 'x'}`),
  unicode.map((s) => `Bearer ${s}`),
  fc.integer({ min: 5_000, max: 20_000 }).map((n) => `Bearer ${'a'.repeat(n)}`),
);

/** Body fields real clients send that no request describes, and names a mass assignment would try. */
const UNKNOWN_FIELDS = [
  'deviceId',
  'termsVersion',
  '__proto__',
  'constructor',
  'isAdmin',
  'isSuperAdmin',
  'isActive',
  'activePlan',
  'role',
  'id',
];

function withoutKey(object: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _removed, ...rest } = object;
  return rest;
}

/** The mutations that apply to an operation, read from the document. */
export function mutationsFor(
  document: Json,
  definition: RouteWithSchemas,
): Array<{ kind: string; arbitrary: fc.Arbitrary<Mutation> }> {
  const { route, schemas } = definition;
  const entry = operationsById(document).get(route.operationId)!;
  const parameters = (entry.operation.parameters ?? []) as Json[];
  const result: Array<{ kind: string; arbitrary: fc.Arbitrary<Mutation> }> = [];

  if (route.auth === 'bearer') {
    result.push({
      kind: 'authorization',
      arbitrary: fc.oneof(
        badAuthorization.map(
          (value): Mutation =>
            (r) => ({ ...r, token: undefined, headers: { ...r.headers, authorization: value } }),
        ),
        fc.constant<Mutation>((r) => ({ ...r, token: undefined })),
      ),
    });
  }

  const media = entry.operation.requestBody?.content?.['application/json'] as Json | undefined;
  if (schemas.body && media) {
    const body = resolveSchema(document, media.schema);
    const properties = Object.keys((body.properties as Record<string, Json> | undefined) ?? {});
    const required = (body.required as string[] | undefined) ?? [];
    const stringProperties = properties.filter((name) => {
      const property = resolveSchema(document, (body.properties as Record<string, Json>)[name]);
      return property.type === 'string' || (Array.isArray(property.type) && property.type.includes('string'));
    });
    const current = (r: InvokeOptions) =>
      r.body && typeof r.body === 'object' && !Array.isArray(r.body) ? (r.body as Record<string, unknown>) : {};
    const kinds: fc.Arbitrary<Mutation>[] = [
      anyJson
        .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
        .map(
          (value): Mutation =>
            (r) => ({ ...r, rawBody: undefined, body: value }),
        ),
      notJson.map(
        (text): Mutation =>
          (r) => ({ ...r, body: undefined, rawBody: text }),
      ),
      fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data').map(
        (type): Mutation =>
          (r) => ({
            ...r,
            headers: { ...r.headers, 'content-type': type },
            rawBody: JSON.stringify(r.body ?? {}),
            body: undefined,
          }),
      ),
    ];
    if (required.length > 0)
      kinds.push(
        fc.constantFrom(...required).map(
          (name): Mutation =>
            (r) => ({ ...r, rawBody: undefined, body: withoutKey(current(r), name) }),
        ),
      );
    // Fields the description does not show: ignored (a newer client's, or mass assignment), never refused.
    kinds.push(
      fc
        .tuple(
          fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), unicode, fc.constantFrom(...UNKNOWN_FIELDS)),
          anyJson,
        )
        .filter(([key]) => !properties.includes(key))
        .map(
          ([key, value]): Mutation =>
            (r) => ({ ...r, rawBody: undefined, body: { ...current(r), [key]: value } }),
        ),
    );
    // The same names one level down, inside a field's object value: dropped at any depth too.
    if (properties.length > 0)
      kinds.push(
        fc.tuple(fc.constantFrom(...properties), fc.constantFrom('__proto__', 'constructor'), anyJson).map(
          ([name, key, value]): Mutation =>
            (r) => {
              const inner = current(r)[name];
              const object = inner && typeof inner === 'object' && !Array.isArray(inner) ? inner : {};
              return { ...r, rawBody: undefined, body: { ...current(r), [name]: { ...object, [key]: value } } };
            },
        ),
      );
    if (properties.length > 0) {
      kinds.push(
        fc.tuple(fc.constantFrom(...properties), anyJson).map(
          ([name, value]): Mutation =>
            (r) => ({ ...r, rawBody: undefined, body: { ...current(r), [name]: value } }),
        ),
      );
    }
    if (stringProperties.length > 0) {
      kinds.push(
        fc.tuple(fc.constantFrom(...stringProperties), fc.oneof(huge, unicode, badText, withNul)).map(
          ([name, value]): Mutation =>
            (r) => ({ ...r, rawBody: undefined, body: { ...current(r), [name]: value } }),
        ),
      );
    }
    result.push({ kind: 'body', arbitrary: fc.oneof(...kinds) });
  }

  const queryParameters = parameters.filter((p) => p.in === 'query');
  if (queryParameters.length > 0) {
    const names = queryParameters.map((p) => p.name as string);
    const requiredNames = queryParameters.filter((p) => p.required).map((p) => p.name as string);
    const kinds: fc.Arbitrary<Mutation>[] = [
      fc
        .tuple(
          fc.constantFrom(...names),
          fc.oneof(
            badText,
            withNul,
            fc.array(badText, { minLength: 2, maxLength: 4 }),
            fc.array(fc.constant('x'), { minLength: 120, maxLength: 200 }),
          ),
        )
        .map(
          ([name, value]): Mutation =>
            (r) => ({ ...r, query: { ...r.query, [name]: value } }),
        ),
    ];
    if (requiredNames.length > 0) {
      kinds.push(
        fc.constantFrom(...requiredNames).map(
          (name): Mutation =>
            (r) => ({ ...r, query: withoutKey(r.query ?? {}, name) as Record<string, string> }),
        ),
      );
    }
    result.push({ kind: 'query', arbitrary: fc.oneof(...kinds) });
  }

  const pathNames = pathParameterNames(route.path);
  if (pathNames.length > 0 && schemas.path) {
    result.push({
      kind: 'path',
      arbitrary: fc.tuple(fc.constantFrom(...pathNames), badText).map(
        ([name, value]): Mutation =>
          (r) => ({ ...r, path: { ...r.path, [name]: value } }),
      ),
    });
  }

  if (takesOrganizationHeader(route)) {
    result.push({
      kind: 'organization header',
      arbitrary: fc.oneof(
        badText.map(
          (value): Mutation =>
            (r) => ({ ...r, organization: undefined, headers: { ...r.headers, organization: value } }),
        ),
        fc.constant<Mutation>((r) => ({ ...r, organization: undefined })),
      ),
    });
  }

  if (route.rawBody) {
    result.push({
      kind: 'raw body',
      arbitrary: fc
        .tuple(fc.oneof(notJson, fc.json({ maxDepth: 2 }), huge), fc.oneof(badText, fc.constant('t=1,v1=00')))
        .map(
          ([text, signature]): Mutation =>
            (r) => ({ ...r, rawBody: text, headers: { ...r.headers, 'stripe-signature': signature } }),
        ),
    });
  }
  return result;
}

/** A generated request: the valid request it was made from (`base`), the kinds of mutation applied and the result. */
export interface FuzzedRequest {
  kinds: string[];
  base: InvokeOptions;
  request: InvokeOptions;
}

/** One to three mutations applied to the valid request. */
export function malformedRequest(
  document: Json,
  definition: RouteWithSchemas,
  valid: () => InvokeOptions,
): fc.Arbitrary<FuzzedRequest> {
  const available = mutationsFor(document, definition);
  if (available.length === 0) throw new Error(`${definition.route.operationId} takes nothing that can be malformed`);
  // Input is what is fuzzed; a broken token (always 401, whatever the input) is one case in nine where there is input.
  const one = fc.oneof(
    ...available.map(({ kind, arbitrary }) => ({
      weight: kind === 'authorization' ? 1 : 4,
      arbitrary: arbitrary.map((mutate) => ({ kind, mutate })),
    })),
  );
  return fc.array(one, { minLength: 1, maxLength: 3 }).map((steps) => {
    const base = valid();
    return {
      kinds: steps.map((s) => s.kind),
      base,
      request: steps.reduce((request, step) => step.mutate(request), base),
    };
  });
}

/**
 * An id as the document describes what clients send: any text of 1 to MAX_ID_LENGTH characters.
 * A free-text filter described the same way (email folders) is fine too: unknown text matches nothing either way.
 */
const isIdSchema = (schema: Json | undefined) =>
  schema?.type === 'string' &&
  schema.minLength === 1 &&
  schema.maxLength === MAX_ID_LENGTH &&
  Object.keys(schema).length === 3;

/** The parameters of an operation that carry ids (path, query, the organization header), single or lists. */
export function idParameters(
  document: Json,
  definition: RouteWithSchemas,
): Array<{ in: 'path' | 'query' | 'header'; name: string }> {
  const parameters = (operationsById(document).get(definition.route.operationId)!.operation.parameters ?? []) as Json[];
  return parameters
    .filter((p) => isIdSchema(p.schema) || (p.schema.type === 'array' && isIdSchema(p.schema.items)))
    .map((p) => ({ in: p.in, name: p.name }));
}

const headerOf = (request: InvokeOptions) => request.organization ?? request.headers?.organization;

/**
 * The same request with every id the mutations changed replaced by a fresh UUID (an unknown id),
 * or undefined when no id changed. An accepted but malformed id must be answered like that twin.
 */
export function unknownIdTwin(
  document: Json,
  definition: RouteWithSchemas,
  { base, request }: FuzzedRequest,
): InvokeOptions | undefined {
  let twin: InvokeOptions | undefined;
  for (const parameter of idParameters(document, definition)) {
    if (parameter.in === 'header') {
      if (headerOf(request) === headerOf(base) || headerOf(request) === undefined) continue;
      const current = twin ?? request;
      const unknown = randomUUID();
      twin = { ...current, organization: unknown, headers: { ...current.headers, organization: unknown } };
      continue;
    }
    const part = parameter.in === 'path' ? 'path' : 'query';
    const value = request[part]?.[parameter.name];
    if (value === undefined || JSON.stringify(value) === JSON.stringify(base[part]?.[parameter.name])) continue;
    const current = twin ?? request;
    twin = {
      ...current,
      [part]: { ...current[part], [parameter.name]: Array.isArray(value) ? [randomUUID()] : randomUUID() },
    };
  }
  return twin;
}

/** Top-level body fields of a request that the operation's description does not show. */
export function undescribedBodyFields(document: Json, definition: RouteWithSchemas, request: InvokeOptions): string[] {
  const media = operationsById(document).get(definition.route.operationId)!.operation.requestBody?.content?.[
    'application/json'
  ] as Json | undefined;
  const body = request.body;
  if (!media || !body || typeof body !== 'object' || Array.isArray(body)) return [];
  const described = Object.keys((resolveSchema(document, media.schema).properties as Json | undefined) ?? {});
  return Object.keys(body).filter((key) => !described.includes(key));
}
