import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as z from 'zod/mini';
import { routeList } from '../../functions/routes';
import { MAX_REQUEST_BODY_BYTES } from '../../lib/http/payload-limits';
import { ERROR_STATUS, type ErrorCode } from '../../lib/http/errors';
import type { ErrorStatus, RouteDefinition } from '../../lib/http/route';
import { UNSTORABLE_TEXT_MESSAGE } from '../../lib/http/storable-text';
import type { RequestSchemas } from '../../lib/http/validate';
import { ROLES_BY_RANK, type RoleRule, roleSatisfies } from '../../lib/organizations/roles';
import { IdText } from '../../schemas/common/fields';
import { loadHandler } from '../local/router';
import { takesIdempotencyKey } from '../../lib/http/idempotency';
import { type EdgeStatus, edgeStatuses, errorStatuses, pathParameterNames, takesOrganizationHeader } from './statuses';

/** A JSON Schema / OpenAPI object as plain JSON. */
// biome-ignore lint/suspicious/noExplicitAny: JSON Schema is walked generically; any keeps the walkers readable.
export type Json = Record<string, any>;

/** What a handler module carries on `handler.definition` (lib/http/endpoint.ts). */
export interface RouteWithSchemas {
  route: RouteDefinition;
  schemas: RequestSchemas;
}

const ROOT = resolve(import.meta.dirname, '../..');

/** Loads every handler of the route table and reads its route and schemas from `handler.definition`. */
export async function loadRouteDefinitions(
  routes: readonly RouteDefinition[] = routeList,
): Promise<RouteWithSchemas[]> {
  return Promise.all(
    routes.map(async (route) => {
      const handler = (await loadHandler(route)) as { definition?: RouteWithSchemas };
      if (!handler.definition)
        throw new Error(`${route.handler} exports a handler without definition: build it with endpoint()`);
      if (handler.definition.route.operationId !== route.operationId) {
        throw new Error(
          `${route.handler} is built for ${handler.definition.route.operationId}, not ${route.operationId}`,
        );
      }
      return { route, schemas: handler.definition.schemas };
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Component schemas from zod

const COMPONENT_PREFIX = '#/components/schemas/';
const INLINE_PREFIX = '__inline_';

/** Every `$ref` target inside a JSON value. */
function refsIn(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) refsIn(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') into.add(item);
      else refsIn(item, into);
    }
  }
  return into;
}

/** Replaces refs to inlined (unnamed) schemas with their content, recursively. */
// biome-ignore lint/suspicious/noExplicitAny: it returns whatever JSON shape it was given.
function inlineRefs(value: unknown, inline: (ref: string) => Json | undefined): any {
  if (Array.isArray(value)) return value.map((item) => inlineRefs(item, inline));
  if (!value || typeof value !== 'object') return value;
  const object = value as Json;
  if (typeof object.$ref === 'string') {
    const target = inline(object.$ref);
    if (target) {
      const { $ref: _ref, ...siblings } = object;
      return inlineRefs({ ...target, ...siblings }, inline);
    }
  }
  return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, inlineRefs(item, inline)]));
}

function stripSchemaHeader(schema: Json): Json {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

type OverwriteCheck = { _zod: { def: { check: string; tx?: (value: string) => string } } };

/** What a string schema's overwrite checks (trim, toLowerCase, ...) turn `value` into, in order. */
function overwritten(schema: z.core.$ZodType, value: string): string {
  const checks = ((schema._zod.def as { checks?: OverwriteCheck[] }).checks ?? []).map((check) => check._zod.def);
  return checks.reduce((text, check) => (check.check === 'overwrite' && check.tx ? check.tx(text) : text), value);
}

export const TRIM_NOTE = 'Trimmed: leading and trailing white space is removed.';

/**
 * Marks every request string whose schema trims (`x-trim: true` and a sentence), read from the
 * zod checks themselves, so a client knows which fields are trimmed and that no other one is.
 */
function describeTrim({ zodSchema, jsonSchema }: { zodSchema: z.core.$ZodType; jsonSchema: Json }): void {
  if (zodSchema._zod.def.type !== 'string') return;
  const probe = overwritten(zodSchema, ' x ');
  if (probe !== probe.trim()) return;
  jsonSchema['x-trim'] = true;
  jsonSchema.description = jsonSchema.description
    ? `${String(jsonSchema.description).replace(/\.?$/, '.')} ${TRIM_NOTE}`
    : TRIM_NOTE;
}

/**
 * Converts the zod registry (named contract schemas: LoginEmailDto, UserEntity, ...) and the
 * operations' unnamed schemas with zod's own `z.toJSONSchema`, once for what clients send
 * (`input`) and once for what the service answers (`output`).
 */
class SchemaConverter {
  private readonly registry = z.registry<{ id: string }>();
  private readonly inlineIds = new Map<z.ZodMiniType, string>();
  private converted?: { input: Record<string, Json>; output: Record<string, Json> };

  constructor() {
    const named = (z.globalRegistry as unknown as { _idmap: Map<string, z.ZodMiniType> })._idmap;
    for (const [id, schema] of named) this.registry.add(schema, { id });
  }

  /** A ref for any schema: its contract name when registered, else an inline placeholder. */
  ref(schema: z.ZodMiniType): string {
    const named = z.globalRegistry.get(schema)?.id;
    if (typeof named === 'string') return `${COMPONENT_PREFIX}${named}`;
    let id = this.inlineIds.get(schema);
    if (!id) {
      id = `${INLINE_PREFIX}${this.inlineIds.size}`;
      this.inlineIds.set(schema, id);
      this.registry.add(schema, { id });
    }
    return `${COMPONENT_PREFIX}${id}`;
  }

  private convert() {
    const run = (io: 'input' | 'output') => {
      const { schemas } = z.toJSONSchema(this.registry, {
        target: 'draft-2020-12',
        io,
        unrepresentable: 'any',
        uri: (id) => `${COMPONENT_PREFIX}${id}`,
        override: io === 'input' ? describeTrim : undefined,
      });
      if ('__shared' in schemas)
        throw new Error('zod extracted shared definitions; register the shared schema with an id');
      return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, stripSchemaHeader(schema as Json)]));
    };
    this.converted ??= { input: run('input'), output: run('output') };
    return this.converted;
  }

  /** The JSON Schema of a ref in one direction, with unnamed schemas inlined and named ones left as refs. */
  resolve(ref: string, io: 'input' | 'output'): Json {
    const all = this.convert()[io];
    const inline = (target: string) =>
      target.startsWith(`${COMPONENT_PREFIX}${INLINE_PREFIX}`) ? all[target.slice(COMPONENT_PREFIX.length)] : undefined;
    return inlineRefs({ $ref: ref }, inline);
  }

  /**
   * The named components the operations reach, each in the direction it is used in (requests in
   * `input`, answers in `output`); a schema used both ways must convert the same both ways.
   */
  components(roots: { input: Json[]; output: Json[] }): Record<string, Json> {
    const converted = this.convert();
    const use = new Map<string, Set<'input' | 'output'>>();
    for (const io of ['input', 'output'] as const) {
      const pending = [...roots[io].flatMap((root) => [...refsIn(root)])];
      while (pending.length > 0) {
        const ref = pending.pop()!;
        if (!ref.startsWith(COMPONENT_PREFIX)) continue;
        const id = ref.slice(COMPONENT_PREFIX.length);
        const seen = use.get(id) ?? new Set();
        if (seen.has(io)) continue;
        seen.add(io);
        use.set(id, seen);
        pending.push(...refsIn(converted[io][id]));
      }
    }
    const result: Record<string, Json> = {};
    for (const id of [...use.keys()].filter((id) => !id.startsWith(INLINE_PREFIX)).sort()) {
      const ways = use.get(id)!;
      const io = ways.has('output') ? 'output' : 'input';
      if (ways.size === 2 && JSON.stringify(converted.input[id]) !== JSON.stringify(converted.output[id])) {
        throw new Error(
          `${id} is used in requests and in answers but converts differently: give each direction its own schema`,
        );
      }
      result[id] = this.resolveNamed(id, io);
    }
    return result;
  }

  private resolveNamed(id: string, io: 'input' | 'output'): Json {
    const all = this.convert()[io];
    const inline = (target: string) =>
      target.startsWith(`${COMPONENT_PREFIX}${INLINE_PREFIX}`) ? all[target.slice(COMPONENT_PREFIX.length)] : undefined;
    return inlineRefs(all[id], inline);
  }
}

// ---------------------------------------------------------------------------------------------
// The document

export const EXTENSION_TAG = 'Extension';

/** Display names of the areas (the folder of the handler under functions/). */
const AREA_TAGS: Record<string, { name: string; description: string }> = {
  auth: {
    name: 'Authentication and tokens',
    description: 'Sign-up, sign-in, sessions, refresh and automation tokens.',
  },
  user: { name: 'User', description: "The signed-in user's profile, password and email verification." },
  organization: { name: 'Organizations', description: 'Organizations, members, roles and invitations.' },
  billing: { name: 'Billing', description: 'Plans, card set-up, credits, reconciliation, history and reports.' },
  cases: { name: 'Cases', description: 'Cases (extension) and their billing: Pro upgrade and statements.' },
  material: {
    name: 'Case material',
    description: 'Email threads, professional-network messages, chat-platform tickets and device notes.',
  },
  admin: { name: 'Administration', description: 'Super-admin reports.' },
  webhooks: { name: 'Webhooks', description: 'Events from the payment processor.' },
};

function areaTag(route: RouteDefinition): { name: string; description: string } {
  const area = route.handler.split('/')[1] ?? 'other';
  return (
    AREA_TAGS[area] ?? {
      name: area.charAt(0).toUpperCase() + area.slice(1),
      description: `Routes of functions/${area}/.`,
    }
  );
}

/** Header parameters an operation reads that no schema describes (the handler reads them as is). */
const EXTRA_HEADERS: Record<string, Json[]> = {
  stripeWebhook: [
    {
      name: 'Stripe-Signature',
      in: 'header',
      required: true,
      description: 'Signature of the raw body with the webhook signing secret (`t=...,v1=...`).',
      schema: { type: 'string' },
    },
  ],
};

const ROLE_RULE_TEXT: Record<RoleRule, string> = {
  'any-role': 'any role',
  'member-or-above': 'member role or above',
  'admin-or-owner': 'org admin or owner',
  'admin-owner-or-billing': 'org admin, owner or billing role',
};

/**
 * Global input rules of lib/http/validate.ts, stated once for every operation: text Postgres
 * cannot store is refused everywhere, and only fields marked `x-trim` are trimmed.
 */
export const TEXT_RULE =
  'Text in the body, query and path (values and object keys) must not contain NUL (U+0000) or unpaired UTF-16 surrogates: ' +
  `such a request is 400 \`VALIDATION_FAILED\` naming the field ("${UNSTORABLE_TEXT_MESSAGE}"). ` +
  'Strings are kept as sent, except that fields marked `x-trim: true` lose their leading and trailing white space and email addresses are lowercased. ' +
  'Body fields the description does not show are ignored, and so are `__proto__` and `constructor` keys at any depth of a JSON body.';

const RESPONSE_NAMES: Record<ErrorStatus | EdgeStatus, { name: string; summary: string }> = {
  400: {
    name: 'BadRequest',
    summary: 'The request is invalid (on every operation, also for text with NUL or unpaired surrogates)',
  },
  401: { name: 'Unauthorized', summary: 'Not signed in, or refused at sign-in' },
  403: { name: 'Forbidden', summary: 'Not allowed' },
  404: { name: 'NotFound', summary: 'Not found' },
  409: { name: 'Conflict', summary: 'Conflicts with the current state' },
  429: { name: 'TooManyRequests', summary: 'Rate limited' },
  500: { name: 'InternalServerError', summary: 'Unexpected failure (no internals are shown)' },
  405: {
    name: 'MethodNotAllowed',
    summary:
      'The path called with a method it does not have (the `Allow` header lists those it has); answered before any operation runs',
  },
  413: {
    name: 'PayloadTooLarge',
    summary: `The request body is larger than ${MAX_REQUEST_BODY_BYTES.toLocaleString('en-US')} bytes, the one limit of every operation (larger bodies would not fit the invocation event of the function); answered before the operation runs`,
  },
  414: {
    name: 'UriTooLong',
    summary: 'The request target (path and query) is longer than 8 KB; answered before the operation runs',
  },
  431: {
    name: 'HeadersTooLarge',
    summary: 'The request headers are larger than 16 KB; answered before the operation runs',
  },
  503: {
    name: 'ServiceUnavailable',
    summary:
      'The database or the payment processor is briefly down, or payments are not configured yet (PAYMENTS_NOT_CONFIGURED, where the operation needs the processor); nothing was done: retry after Retry-After seconds',
  },
};

/** The optional header of every write (lib/http/idempotency.ts). */
const IDEMPOTENCY_KEY_PARAMETER: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe (Stripe semantics): the first answer to a key is kept 24 hours per caller and operation; ' +
    'the same key with the same request replays it (with `Idempotent-Replayed: true`) instead of running again; ' +
    'with a different request it is 409 `IDEMPOTENCY_KEY_REUSED`; while the first request runs, 409 `IDEMPOTENCY_KEY_IN_USE`. ' +
    'Requests refused before the operation runs (authentication, rate limit, validation, organization or case rules) ' +
    'and 5xx or 429 answers are not kept. 1 to 255 printable ASCII characters (400 `VALIDATION_FAILED` naming `headers.idempotency-key` otherwise); a random UUID is a good key.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
};

/** The error codes answered with a status, from the closed list in lib/http/errors.ts. */
export function codesOfStatus(status: number): ErrorCode[] {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);
}

function errorComponents(): { schemas: Json; responses: Json; headers: Json } {
  const schemas = {
    ErrorDetail: {
      type: 'object',
      description:
        'One bad field: its location (`body.email`, `query.page`, `path.id`, `headers.organization`) and what is wrong.',
      properties: { path: { type: 'string' }, message: { type: 'string' } },
      required: ['path', 'message'],
      additionalProperties: false,
    },
    ErrorEnvelope: {
      type: 'object',
      description: 'Every error answer. `code` is a stable UPPER_SNAKE string from a closed list.',
      properties: {
        statusCode: { type: 'integer' },
        timestamp: { type: 'string', format: 'date-time' },
        error: {
          type: 'object',
          properties: {
            code: { type: 'string', enum: Object.keys(ERROR_STATUS) },
            message: { type: 'string' },
            details: { type: 'array', items: { $ref: `${COMPONENT_PREFIX}ErrorDetail` } },
          },
          required: ['code', 'message'],
          additionalProperties: false,
        },
        requestId: {
          type: 'string',
          description: 'Also in the X-Request-Id header; quote it when reporting a problem.',
        },
      },
      required: ['statusCode', 'timestamp', 'error', 'requestId'],
      additionalProperties: false,
    },
  };
  const headers = {
    'X-Request-Id': {
      description: 'The id of this request (sent back when the client sent a safe one).',
      schema: { type: 'string' },
    },
    'Retry-After': {
      description:
        'Seconds to wait before retrying: until the rate-limit window ends (429), or until the service is likely back (503).',
      schema: { type: 'integer', minimum: 0 },
    },
    'Idempotent-Replayed': {
      description:
        'On a write sent with an `Idempotency-Key`: `true` when this is the stored answer of an earlier request with the key.',
      schema: { type: 'string', enum: ['true'] },
    },
    Allow: {
      description: 'The methods the path has, comma-separated.',
      schema: { type: 'string' },
    },
  };
  const responses: Json = {};
  for (const [status, { name, summary }] of Object.entries(RESPONSE_NAMES)) {
    const codes = codesOfStatus(Number(status));
    responses[name] = {
      description: `${summary}. Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
      headers: {
        'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
        ...(status === '405' ? { Allow: { $ref: '#/components/headers/Allow' } } : {}),
        ...(status === '429' || status === '503'
          ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
          : {}),
        // A refusal by the operation itself is kept for its Idempotency-Key and replayed.
        ...(['400', '401', '403', '404', '409'].includes(status)
          ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } }
          : {}),
      },
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: `${COMPONENT_PREFIX}ErrorEnvelope` },
              {
                type: 'object',
                properties: {
                  statusCode: { const: Number(status) },
                  error: { type: 'object', properties: { code: { enum: codes } } },
                },
              },
            ],
          },
        },
      },
    };
  }
  return { schemas, responses, headers };
}

const LIST_PARAMETER_NOTE =
  'Repeat the parameter or separate values with commas; each value is trimmed and empty ones are dropped.';

/**
 * A parameter as a client sends it: the input side of its zod schema. Two input sides say less than
 * the client may rely on, so they are described by what they parse to: whole-number text (`page`)
 * as an integer with its bounds, and lists (`?tags=a&tags=b`, `?tags=a,b`) as an array of items.
 */
function parameterSchema(input: Json, output: Json): Json {
  if (
    input.type === 'string' &&
    typeof input.pattern === 'string' &&
    /^\^\\d\{/.test(input.pattern) &&
    output.type === 'number'
  ) {
    return { ...output, type: 'integer' };
  }
  if (output.type === 'array') return output;
  return input;
}

function objectParameters(converter: SchemaConverter, schema: z.ZodMiniType, location: 'path' | 'query'): Json[] {
  const ref = converter.ref(schema);
  const input = converter.resolve(ref, 'input');
  const output = converter.resolve(ref, 'output');
  if (input.type !== 'object' || !input.properties) throw new Error(`The ${location} schema must be an object`);
  const required = new Set<string>(input.required ?? []);
  return Object.entries(input.properties as Record<string, Json>).map(([name, property]) => {
    const described = parameterSchema(property, (output.properties as Record<string, Json>)[name] ?? property);
    if (Object.keys(described).length === 0)
      throw new Error(`The ${location} parameter ${name} has no JSON Schema: give it a representable input type`);
    const isArray = described.type === 'array';
    return {
      name,
      in: location,
      required: location === 'path' ? true : required.has(name),
      ...(isArray
        ? { style: 'form', explode: true, description: LIST_PARAMETER_NOTE }
        : typeof described.description === 'string'
          ? { description: described.description }
          : {}),
      schema: described,
    };
  });
}

function describeOperation(route: RouteDefinition): string {
  const lines: string[] = [];
  if (route.auth === 'none') lines.push('No authentication (a bearer token may be sent; it is ignored).');
  else {
    lines.push(
      route.scope
        ? `Bearer token. An automation token needs the \`${route.scope}\` scope.`
        : 'Bearer token of a full session (sign-in or legacy token); automation tokens are refused (403).',
    );
  }
  if (route.superAdmin) lines.push('Super admin only.');
  if (route.organization) {
    const where =
      route.organization.from === 'header'
        ? 'the organization of the `organization` header'
        : 'the organization `orgId`';
    const allowed = ROLES_BY_RANK.filter((role) => roleSatisfies(role, route.organization!.role));
    const plan = route.organization.activePlan ? ', and the organization needs an active plan' : '';
    lines.push(
      `Needs ${ROLE_RULE_TEXT[route.organization.role]} (${allowed.join(', ')}) in ${where}${plan}; 403 otherwise.`,
    );
    if (route.organization.self)
      lines.push(
        `Any member may call it on themselves (\`${route.organization.self}\` is the caller), whatever their role and plan.`,
      );
  }
  if (route.case) {
    const roles = route.case.orRoles
      ? `, or any access and the ${route.case.orRoles.join(' or ')} role in the organization`
      : '';
    const where =
      route.organization?.from === 'header' ? ' A case of another organization than the header is 403.' : '';
    lines.push(`Needs ${route.case.access.join(', ')} access to the case${roles}; 403 otherwise.${where}`);
  }
  if (route.rateLimit)
    lines.push(
      `At most ${route.rateLimit.perMinute} requests per minute ${route.auth === 'none' ? 'per client address (IPv6: per /64)' : 'per user'}${route.rateLimit.shared ? `, counted together over every route of the \`${route.rateLimit.shared}\` limit` : ''} (429 with Retry-After).`,
    );
  if (route.credential)
    lines.push(
      'Answers or takes a credential: an `Idempotency-Key` is ignored (each request runs; nothing is stored).',
    );
  if (route.internal) lines.push('Internal: part of the contract, not meant for general clients.');
  if (route.extension) lines.push("Extension: ours, not the contract's.");
  return lines.join('\n\n');
}

/**
 * Every operation declares the bearer scheme (the contract's rule 1). One that needs no token says
 * so with an empty alternative: a token may be sent, and is ignored.
 */
export function operationSecurity(route: RouteDefinition): Json[] {
  if (route.auth === 'none') return [{}, { bearerAuth: [] }];
  return [{ bearerAuth: route.scope ? [route.scope] : [] }];
}

function successResponse(
  route: RouteDefinition,
  schemas: RequestSchemas,
  converter: SchemaConverter,
): { response: Json; root?: Json } {
  const headers = {
    'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
    ...(takesIdempotencyKey(route)
      ? { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } }
      : {}),
  };
  const description = route.summary;
  if (route.successStatus === 204) return { response: { description: `${description} (no content)`, headers } };
  const base = {
    statusCode: { type: 'integer', const: route.successStatus },
    timestamp: { type: 'string', format: 'date-time' },
  };
  if (route.envelope === 'no-data') {
    const schema = {
      type: 'object',
      properties: base,
      required: ['statusCode', 'timestamp'],
      additionalProperties: false,
    };
    return { response: { description, headers, content: { 'application/json': { schema } } } };
  }
  const data = schemas.response ? converter.resolve(converter.ref(schemas.response), 'output') : {};
  const schema = {
    type: 'object',
    properties: { data, ...base },
    required: ['data', 'statusCode', 'timestamp'],
    additionalProperties: false,
  };
  return { response: { description, headers, content: { 'application/json': { schema } } }, root: data };
}

export interface BuildOptions {
  /** Base URLs of the servers (the local server puts its own origin here). */
  servers?: Array<{ url: string; description?: string }>;
}

const PACKAGE = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  description?: string;
};

/**
 * The OpenAPI 3.1 description of the service, built from the route table and the zod schemas each
 * handler validates with (never written by hand).
 */
export function buildOpenApiDocument(definitions: readonly RouteWithSchemas[], options: BuildOptions = {}): Json {
  const converter = new SchemaConverter();
  const roots = { input: [] as Json[], output: [] as Json[] };
  const paths: Record<string, Json> = {};
  const tags = new Map<string, string>();
  const errors = errorComponents();
  // Name every schema first: zod converts the whole registry at once.
  for (const { schemas } of definitions) {
    for (const schema of [schemas.body, schemas.query, schemas.path, schemas.response])
      if (schema) converter.ref(schema);
  }

  for (const { route, schemas } of definitions) {
    const area = areaTag(route);
    tags.set(area.name, area.description);
    const parameters: Json[] = [];
    if (schemas.path) parameters.push(...objectParameters(converter, schemas.path, 'path'));
    for (const name of pathParameterNames(route.path)) {
      if (!parameters.some((p) => p.in === 'path' && p.name === name))
        parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
    }
    if (schemas.query) parameters.push(...objectParameters(converter, schemas.query, 'query'));
    if (takesOrganizationHeader(route)) {
      parameters.push({
        name: 'organization',
        in: 'header',
        required: true,
        description: 'Id of the selected (active) organization.',
        schema: stripSchemaHeader(z.toJSONSchema(IdText, { target: 'draft-2020-12', io: 'input' }) as Json),
      });
    }
    parameters.push(...(EXTRA_HEADERS[route.operationId] ?? []));
    if (takesIdempotencyKey(route)) parameters.push(IDEMPOTENCY_KEY_PARAMETER);
    for (const parameter of parameters) roots.input.push(parameter.schema);

    let requestBody: Json | undefined;
    if (schemas.body) {
      const schema = converter.resolve(converter.ref(schemas.body), 'input');
      roots.input.push(schema);
      requestBody = {
        required: !schemas.body.safeParse(undefined).success,
        content: { 'application/json': { schema } },
      };
    } else if (route.rawBody) {
      requestBody = {
        required: true,
        description: 'Sent as is; the handler verifies it byte for byte.',
        content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
      };
    }

    const success = successResponse(route, schemas, converter);
    if (success.root) roots.output.push(success.root);
    const responses: Json = { [route.successStatus]: success.response };
    const statuses = [...errorStatuses(route, schemas), ...edgeStatuses(route, schemas)].sort((a, b) => a - b);
    for (const status of statuses)
      responses[status] = { $ref: `#/components/responses/${RESPONSE_NAMES[status].name}` };

    const operation: Json = {
      operationId: route.operationId,
      summary: route.summary,
      description: describeOperation(route),
      tags: route.extension ? [area.name, EXTENSION_TAG] : [area.name],
      security: operationSecurity(route),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
      ...(route.internal ? { 'x-internal': true } : {}),
      ...(route.extension ? { 'x-extension': true } : {}),
      ...(route.auth === 'bearer' ? { 'x-scope': route.scope } : {}),
      ...(route.organization
        ? {
            'x-organization': {
              from: route.organization.from,
              role: route.organization.role,
              roles: ROLES_BY_RANK.filter((role) => roleSatisfies(role, route.organization!.role)),
              activePlan: route.organization.activePlan ?? false,
            },
          }
        : {}),
      ...(route.case
        ? {
            'x-case-access': {
              rule: route.case.name,
              access: [...route.case.access],
              ...(route.case.orRoles ? { orRoles: [...route.case.orRoles] } : {}),
            },
          }
        : {}),
      ...(route.superAdmin ? { 'x-super-admin': true } : {}),
      ...(route.rateLimit ? { 'x-rate-limit': { perMinute: route.rateLimit.perMinute } } : {}),
    };
    paths[route.path] ??= {};
    const item = paths[route.path]!;
    const method = route.method.toLowerCase();
    if (item[method]) throw new Error(`${route.method} ${route.path} is in the route table twice`);
    item[method] = operation;
  }

  const components = converter.components(roots);
  for (const name of Object.keys(errors.schemas)) {
    if (name in components)
      throw new Error(`A zod schema is registered as ${name}, which the document uses for errors`);
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Case Evidence and Billing Service API',
      version: PACKAGE.version,
      description: [
        'HTTP JSON API for legal case work: accounts, organizations, members and roles, billing, cases and their evidence.',
        'Every JSON answer is an envelope: `{ data, statusCode, timestamp }` on success (204 has no body), ' +
          '`{ statusCode, timestamp, error: { code, message, details? }, requestId }` on error. Money is integer cents; time is UTC ISO 8601.',
        'Send `Authorization: Bearer <token>`: an access token (login, register, refresh), a scoped automation token (`cebs_at_...`) or a legacy token (`cebs_lt_...`).',
        TEXT_RULE,
        `Request bodies are at most ${MAX_REQUEST_BODY_BYTES.toLocaleString('en-US')} bytes (413 \`PAYLOAD_TOO_LARGE\` beyond). ` +
          'Answers of 1 KiB or more are compressed (`br` or `gzip`) when `Accept-Encoding` allows it. ' +
          'An answer still larger than the platform carries (6 MB) is `303 See Other`: `Location` (also `see.url` in the body, with `see.expiresAt`, ' +
          '`see.statusCode` of the answer, `see.sizeBytes` and `see.contentEncoding`) is a signed link, valid for a few minutes and without credentials, ' +
          'to exactly the envelope the operation answered; an `Idempotency-Key` replay answers the same way with a new link.',
        `Operations flagged \`x-internal\` are part of the contract but not meant for general clients; those tagged \`${EXTENSION_TAG}\` (\`x-extension\`) are ours, not the contract's.`,
      ].join('\n\n'),
    },
    servers: options.servers ?? [{ url: 'http://localhost:3000', description: 'Local server (npm start)' }],
    tags: [
      ...[...tags].map(([name, description]) => ({ name, description })),
      {
        name: EXTENSION_TAG,
        description:
          "Operations that are ours, not the contract's, added so the service is usable end to end (`x-extension: true`).",
      },
    ],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT access token, or an automation (cebs_at_) or legacy (cebs_lt_) token',
          description: 'The roles listed on an operation are the automation-token scopes it needs.',
        },
      },
      headers: errors.headers,
      responses: errors.responses,
      schemas: { ...components, ...errors.schemas },
    },
  };
}

/** The document for the current route table (handlers loaded once per process). */
export async function openApiDocument(options: BuildOptions = {}): Promise<Json> {
  return buildOpenApiDocument(await loadRouteDefinitions(), options);
}
