import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import * as z from 'zod/mini';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeList, routes } from '../../functions/routes';
import {
  buildOpenApiDocument,
  codesOfStatus,
  EXTENSION_TAG,
  type Json,
  loadRouteDefinitions,
  type RouteWithSchemas,
} from '../../infra/openapi/document';
import { readGeneratedFiles, renderGeneratedFiles } from '../../infra/openapi/generate';
import { referencePageDocument } from '../../infra/openapi/reference-page';
import {
  derivedErrorStatuses,
  edgeStatuses,
  errorStatuses,
  pathParameterNames,
  takesOrganizationHeader,
} from '../../infra/openapi/statuses';
import { ERROR_STATUSES, type RouteDefinition } from '../../lib/http/route';
import { MAX_ID_LENGTH } from '../../schemas/common/fields';
import { ContractChecker } from './support/contract';
import { operationsById } from './support/requests';

/**
 * The OpenAPI document itself: valid OpenAPI 3.1 (a maintained validator), complete (every route
 * of the table, nothing else), exact (named schemas, statuses, headers, security, flags read from
 * the route entries and the handlers' zod schemas), and committed in its latest generated form.
 */

let definitions: RouteWithSchemas[];
let document: Json;
let operations: ReturnType<typeof operationsById>;

beforeAll(async () => {
  definitions = await loadRouteDefinitions();
  document = buildOpenApiDocument(definitions);
  operations = operationsById(document);
});

const each = () => routeList.map((route) => [route.operationId, route] as const);
const definitionOf = (route: RouteDefinition) => definitions.find((d) => d.route.operationId === route.operationId)!;
const operationOf = (route: RouteDefinition) => operations.get(route.operationId)!.operation;
const nameOf = (schema: z.ZodMiniType | undefined) =>
  schema ? (z.globalRegistry.get(schema)?.id as string | undefined) : undefined;

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 for a maintained validator (@seriousme/openapi-schema-validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('holds only schemas that compile as JSON Schema 2020-12, every $ref resolving', () => {
    const ajv = new Ajv2020({ strict: true, strictTypes: false, allowUnionTypes: true, validateFormats: true });
    addFormats(ajv);
    // OpenAPI 3.1 allows x- keywords in schemas; ours marks the request strings that are trimmed.
    ajv.addKeyword('x-trim');
    const $defs = JSON.parse(
      JSON.stringify(document.components.schemas).replaceAll('"#/components/schemas/', '"#/$defs/'),
    );
    ajv.addSchema({ $id: 'https://schemas.test/components', $defs });
    const refs = JSON.stringify(document).match(/"\$ref":"[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      const target = ref
        .slice(8, -1)
        .replace(/^#\//, '')
        .split('/')
        .reduce<Json | undefined>((node, key) => node?.[key.replaceAll('~1', '/')], document);
      expect(target, ref).toBeDefined();
    }
    for (const name of Object.keys($defs)) {
      expect(() => ajv.compile({ $ref: `https://schemas.test/components#/$defs/${name}` }), name).not.toThrow();
    }
  });

  it('has every route of the route table once, as method, path and operation id, and nothing else', () => {
    const described = [...operations.values()].map(
      ({ method, path, operation }) => `${method.toUpperCase()} ${path} ${operation.operationId}`,
    );
    expect(described.sort()).toEqual(routeList.map((r) => `${r.method} ${r.path} ${r.operationId}`).sort());
    expect(new Set(described.map((d) => d.split(' ')[2])).size).toBe(routeList.length);
  });

  it.each(each())('%s: summary, parameters (path, query, organization header) and request body', (_name, route) => {
    const { schemas } = definitionOf(route);
    const operation = operationOf(route);
    expect(operation.summary).toBe(route.summary);
    const parameters = (operation.parameters ?? []) as Json[];
    for (const name of pathParameterNames(route.path))
      expect(parameters, name).toContainEqual(expect.objectContaining({ name, in: 'path', required: true }));
    const header = parameters.find((p) => p.in === 'header' && p.name === 'organization');
    if (takesOrganizationHeader(route))
      expect(header).toMatchObject({
        required: true,
        schema: { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH },
      });
    else expect(header).toBeUndefined();
    if (schemas.query) {
      const queryNames = parameters.filter((p) => p.in === 'query').map((p) => p.name);
      expect(queryNames.length).toBeGreaterThan(0);
    }
    if (schemas.body) {
      // Named as in the contract: the body is the registered DTO (a default around it keeps the name).
      const media = operation.requestBody.content['application/json'];
      expect(media.schema.$ref, 'request body refers to a named DTO').toMatch(/^#\/components\/schemas\/\w+Dto$/);
      const name = media.schema.$ref.split('/').at(-1);
      expect([
        nameOf(schemas.body),
        nameOf((schemas.body as unknown as { _zod: { def: { innerType?: z.ZodMiniType } } })._zod.def.innerType),
      ]).toContain(name);
      expect(operation.requestBody.required).toBe(!schemas.body.safeParse(undefined).success);
    } else if (!route.rawBody) {
      expect(operation.requestBody).toBeUndefined();
    }
  });

  it.each(each())(
    '%s: the success answer in its envelope, and every error status with the error envelope',
    (_name, route) => {
      const { schemas } = definitionOf(route);
      const responses = operationOf(route).responses as Record<string, Json>;
      const success = responses[route.successStatus]!;
      if (route.successStatus === 204) expect(success.content).toBeUndefined();
      else {
        const schema = success.content['application/json'].schema;
        expect(schema.properties.statusCode).toEqual({ type: 'integer', const: route.successStatus });
        expect(schema.properties.timestamp).toEqual({ type: 'string', format: 'date-time' });
        if (route.envelope === 'no-data') expect(schema.required).toEqual(['statusCode', 'timestamp']);
        else {
          expect(schema.required).toEqual(['data', 'statusCode', 'timestamp']);
          const name = nameOf(schemas.response);
          if (name) expect(schema.properties.data).toEqual({ $ref: `#/components/schemas/${name}` });
        }
      }
      const errors = Object.keys(responses)
        .filter((s) => s !== String(route.successStatus))
        .map(Number);
      // The route's own statuses, and those answered before any handler (405, 413, 414, 431).
      expect(errors).toEqual([...errorStatuses(route, schemas), ...edgeStatuses(route, schemas)].sort((a, b) => a - b));
      for (const status of derivedErrorStatuses(route, schemas)) expect(errors).toContain(status);
      for (const status of route.errors ?? []) expect(errors, `the entry names ${status}`).toContain(status);
      for (const status of errors) {
        const response = document.components.responses[responses[status]!.$ref.split('/').at(-1)];
        const [envelope, narrowed] = response.content['application/json'].schema.allOf;
        expect(envelope).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
        expect(narrowed.properties.statusCode).toEqual({ const: status });
        expect(narrowed.properties.error.properties.code.enum).toEqual(codesOfStatus(status));
      }
    },
  );

  it.each(each())('%s: security, internal and extension flags from the route entry', (_name, route) => {
    const operation = operationOf(route);
    // The bearer scheme on every operation; one that needs no token adds the empty alternative.
    expect(operation.security).toEqual(
      route.auth === 'bearer' ? [{ bearerAuth: route.scope ? [route.scope] : [] }] : [{}, { bearerAuth: [] }],
    );
    expect(operation['x-internal'] ?? false).toBe(route.internal);
    expect(operation['x-extension'] ?? false).toBe(route.extension ?? false);
    expect(operation.tags.includes(EXTENSION_TAG)).toBe(route.extension ?? false);
    if (route.rateLimit) expect(operation['x-rate-limit']).toEqual({ perMinute: route.rateLimit.perMinute });
    if (route.organization)
      expect(operation['x-organization']).toMatchObject({
        from: route.organization.from,
        role: route.organization.role,
      });
  });

  it('declares the bearer scheme, the closed list of error codes and the extension tag', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.schemas.ErrorEnvelope.properties.error.properties.code.enum.length).toBeGreaterThan(30);
    expect(document.tags.map((t: Json) => t.name)).toContain(EXTENSION_TAG);
    // The contract's names for what it names.
    for (const name of [
      'LoginEmailDto',
      'RegisterEmailDto',
      'GenerateTokenDto',
      'UserEntity',
      'OrganizationDetailsResponseEntity',
      'GenerateTokenResponseEntity',
      'BillingReportQueryDto',
    ]) {
      expect(document.components.schemas, name).toHaveProperty(name);
    }
  });

  it('names in each entry only error statuses the document can describe, each once', () => {
    for (const route of routeList) {
      const errors = route.errors ?? [];
      for (const status of errors) expect(ERROR_STATUSES, route.operationId).toContain(status);
      expect(new Set(errors).size, route.operationId).toBe(errors.length);
    }
  });

  it("derives the statuses an entry's rules imply and adds those its `errors` names", () => {
    const route: RouteDefinition = {
      operationId: 'someNewRoute',
      method: 'POST',
      path: '/widgets/{widgetId}',
      handler: 'functions/widgets/some-new-route.ts',
      summary: 'A new route',
      auth: 'bearer',
      scope: 'cases:write',
      organization: { from: 'header', role: 'admin-or-owner' },
      internal: false,
      successStatus: 201,
      rateLimit: { perMinute: 5 },
      throttle: { rate: 0.05, burst: 1 },
      errors: [404],
    };
    // 409 on a write: its Idempotency-Key reused or in use; 503 on every operation.
    expect(errorStatuses(route, { body: z.object({}) })).toEqual([400, 401, 403, 404, 409, 429, 500, 503]);
    expect(errorStatuses({ ...route, errors: [] }, { body: z.object({}) })).toEqual([
      400, 401, 403, 409, 429, 500, 503,
    ]);
    const bare = { ...route, auth: 'none', organization: undefined, rateLimit: undefined, errors: undefined } as const;
    expect(errorStatuses(bare, {})).toEqual([409, 500, 503]);
    expect(errorStatuses({ ...bare, method: 'GET' }, {})).toEqual([500, 503]);
    // A route of a credential ignores the key: no 409 of its own.
    expect(errorStatuses({ ...bare, credential: true }, {})).toEqual([500, 503]);
  });

  it('is committed as `npm run openapi` writes it, with the typed client types', async () => {
    const fresh = await renderGeneratedFiles(document);
    const committed = readGeneratedFiles();
    expect(
      committed.document === fresh.document,
      'infra/openapi/generated/openapi.json is stale: run npm run openapi',
    ).toBe(true);
    expect(committed.types === fresh.types, 'infra/openapi/generated/schema.d.ts is stale: run npm run openapi').toBe(
      true,
    );
  });

  it('keeps every internal operation on the reference page, badged, and leaves the document alone', () => {
    const page = referencePageDocument(document);
    const pageOperations = operationsById(page);
    for (const route of routeList) {
      const operation = pageOperations.get(route.operationId)!.operation;
      expect(operation['x-internal']).toBeUndefined();
      expect(operation['x-internal-operation'] ?? false).toBe(route.internal);
      if (route.internal) expect(operation['x-badges']).toContainEqual(expect.objectContaining({ name: 'Internal' }));
    }
    expect(operationOf(routes.resendVerificationEmail)['x-internal']).toBe(true);
  });
});

describe('the contract checker', () => {
  let checker: ContractChecker;
  beforeAll(() => {
    checker = new ContractChecker(document);
  });
  const json = { 'content-type': 'application/json' };
  const error = (status: number, code: string) =>
    JSON.stringify({
      statusCode: status,
      timestamp: new Date().toISOString(),
      error: { code, message: 'x' },
      requestId: 'r-1',
    });

  it('accepts an answer that matches the document', () => {
    expect(checker.check('login', { status: 401, headers: json, text: error(401, 'INVALID_CREDENTIALS') })).toEqual([]);
    expect(checker.check('revokeToken', { status: 204, headers: {}, text: '' })).toEqual([]);
  });

  it.each([
    ['a status the document does not declare', 'getProfile', 409, error(409, 'CONFLICT')],
    ['a code of another status', 'login', 401, error(401, 'NOT_FOUND')],
    [
      'a missing field of the entity',
      'checkEmailAvailability',
      200,
      JSON.stringify({ data: { isAvailable: true }, statusCode: 200, timestamp: new Date().toISOString() }),
    ],
    [
      'a field the entity does not have',
      'checkEmailAvailability',
      200,
      JSON.stringify({
        data: { isAvailable: true, type: null, extra: 1 },
        statusCode: 200,
        timestamp: new Date().toISOString(),
      }),
    ],
    [
      'a wrong type',
      'validateOrganizationName',
      200,
      JSON.stringify({ data: { isValid: 'yes' }, statusCode: 200, timestamp: new Date().toISOString() }),
    ],
    [
      'a wrong statusCode in the envelope',
      'validateOrganizationName',
      200,
      JSON.stringify({ data: { isValid: true }, statusCode: 201, timestamp: new Date().toISOString() }),
    ],
    ['a body on a 204', 'revokeToken', 204, '{}'],
    ['a body that is not JSON', 'login', 400, 'oops'],
  ])('reports %s', (_label, operationId, status, text) => {
    expect(checker.check(operationId, { status, headers: json, text })).not.toEqual([]);
  });
});
