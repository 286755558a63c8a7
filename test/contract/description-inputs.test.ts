import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import type * as z from 'zod/mini';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeList, routes } from '../../functions/routes';
import { type Json, type RouteWithSchemas, TEXT_RULE, TRIM_NOTE } from '../../infra/openapi/document';
import { UNSTORABLE_TEXT_MESSAGE } from '../../lib/http/storable-text';
import { Email, MAX_ID_LENGTH } from '../../schemas/common/fields';
import { createUser, type TestUser, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { ipSequence, loadContract } from './support/setup';
import { operationsById, resolveSchema, sampleValue, validRequest } from './support/requests';

/**
 * The API description of what clients send (issue 13, "The API description"): every input is
 * described from the input side of its zod schema, and says what the validator accepts, no more and
 * no less: boolean query flags, email addresses, security, empty lists, trimming, the global text
 * rule, ids and unknown body fields. Each rule is checked in the document and through the handlers.
 */

let document: Json;
let definitions: Map<string, RouteWithSchemas>;
let owner: TestUser;
const uniqueIp = ipSequence('198.21');

beforeAll(async () => {
  ({ document, definitions } = await loadContract());
  owner = await createUser();
});

const operations = () => [...operationsById(document).values()].map((entry) => entry.operation);
const parametersOf = (operationId: string) =>
  (operationsById(document).get(operationId)!.operation.parameters ?? []) as Json[];
const bodySchemaOf = (operationId: string) =>
  resolveSchema(
    document,
    operationsById(document).get(operationId)!.operation.requestBody?.content['application/json'].schema,
  );
const ownerRequest = (operationId: string) => ({
  ...validRequest(document, definitions.get(operationId)!, {
    organizationId: owner.organizationId,
    organizationSlug: '',
  }),
  token: owner.accessToken,
  ip: uniqueIp(),
});

/** The properties of a zod object schema, through a default or optional around it. */
function shapeOf(schema: z.ZodMiniType): Record<string, z.ZodMiniType> {
  let current = schema as unknown as {
    _zod: { def: { type: string; shape?: Record<string, z.ZodMiniType>; innerType?: unknown } };
  };
  while (!current._zod.def.shape && current._zod.def.innerType) current = current._zod.def.innerType as typeof current;
  if (!current._zod.def.shape) throw new Error('not an object schema');
  return current._zod.def.shape;
}

/** Every schema a JSON value reaches (refs followed once), for walks over request descriptions. */
function reachable(root: Json | undefined): Json[] {
  const found: Json[] = [];
  const seen = new Set<string>();
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...node);
    else if (node && typeof node === 'object') {
      const object = node as Json;
      if (typeof object.$ref === 'string') {
        if (seen.has(object.$ref)) continue;
        seen.add(object.$ref);
      }
      const resolved = resolveSchema(document, object);
      found.push(resolved);
      pending.push(...Object.values(resolved));
    }
  }
  return found;
}

const requestSchemas = () =>
  operations().flatMap((operation) => [
    ...((operation.parameters ?? []) as Json[]).map((p) => p.schema as Json),
    ...(operation.requestBody ? reachable(operation.requestBody.content['application/json'].schema) : []),
  ]);

describe('boolean query parameters', () => {
  it('are described by the text they accept (starred, unread, untagged, includeArchived), never as an empty schema', () => {
    const flags = [
      ['listThreadEmails', 'starred'],
      ['listThreadEmails', 'unread'],
      ['listThreadEmails', 'untagged'],
      ['listCases', 'includeArchived'],
    ] as const;
    for (const [operationId, name] of flags) {
      const parameter = parametersOf(operationId).find((p) => p.in === 'query' && p.name === name)!;
      expect(parameter.schema, `${operationId} ${name}`).toEqual({
        type: 'string',
        enum: expect.arrayContaining(['true', 'false', '1', '0']),
      });
      expect(parameter.schema.enum).toHaveLength(4);
    }
    for (const operation of operations()) {
      for (const parameter of (operation.parameters ?? []) as Json[])
        expect(Object.keys(parameter.schema), `${operation.operationId} ${parameter.name}`).not.toEqual([]);
    }
  });

  it('accept exactly the values of their enum, like every enum query parameter', () => {
    const others = ['yes', 'no', 'TRUE', 'False', '2', '', ' true', 'on'];
    for (const [operationId, definition] of definitions) {
      if (!definition.schemas.query) continue;
      const shape = shapeOf(definition.schemas.query);
      for (const parameter of parametersOf(operationId).filter(
        (p) => p.in === 'query' && Array.isArray(p.schema.enum),
      )) {
        const schema = shape[parameter.name]!;
        for (const value of parameter.schema.enum as string[])
          expect(schema.safeParse(value).success, `${operationId} ${parameter.name}=${value}`).toBe(true);
        for (const value of others.filter((v) => !parameter.schema.enum.includes(v))) {
          expect(schema.safeParse(value).success, `${operationId} ${parameter.name}=${value}`).toBe(false);
        }
      }
    }
  });

  it('includeArchived=1 and includeArchived=false list the cases; includeArchived=yes is 400 naming query.includeArchived', async () => {
    for (const value of ['1', '0', 'true', 'false'])
      expectData(await invoke(routes.listCases, { ...ownerRequest('listCases'), query: { includeArchived: value } }));
    expectError(
      await invoke(routes.listCases, { ...ownerRequest('listCases'), query: { includeArchived: 'yes' } }),
      400,
      'VALIDATION_FAILED',
      ['query.includeArchived'],
    );
  });
});

describe('email addresses', () => {
  const described = () => bodySchemaOf('checkEmailAvailability').properties.email as Json;
  const validators = () =>
    (['full', 'fast'] as const).map((mode) => {
      const ajv = new Ajv2020({ strict: false });
      addFormats(ajv, { mode });
      return { mode, validate: ajv.compile(described()) };
    });

  it('are described the same way in every request', () => {
    const emails = requestSchemas().filter((schema) => schema.format === 'email');
    expect(emails.length).toBeGreaterThan(5);
    for (const schema of emails) expect(schema).toEqual(described());
  });

  it.each(['a@b-.com', 'a@-b.com', 'a@b.c-d-.org', 'a@b..com', `a@${'b'.repeat(64)}.com`, 'a.@b.com', "a'@b.com"])(
    '%s is refused by the validator and by the description',
    (address) => {
      expect(Email.safeParse(address).success).toBe(false);
      for (const { mode, validate } of validators()) expect(validate(address), `ajv-formats ${mode}`).toBe(false);
    },
  );

  it.each(['a@b.com', 'A.B+tag@Sub-Domain.Example.ORG', "o'neil@b-c.io", `a@${'b'.repeat(63)}.com`, 'x_y-z@1a.museum'])(
    '%s is accepted by the validator and by the description',
    (address) => {
      expect(Email.safeParse(address).success).toBe(true);
      for (const { mode, validate } of validators()) expect(validate(address), `ajv-formats ${mode}`).toBe(true);
    },
  );

  it('the description (format and pattern, either ajv-formats mode) accepts exactly what the validator accepts', () => {
    const checks = validators();
    // Mostly well-formed parts, with the characters and lengths where readings of "email" differ.
    const label = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9-]{0,6}[A-Za-z0-9])?$/),
      fc.stringMatching(/^[A-Za-z0-9-]{1,8}$/),
      fc.constantFrom('b'.repeat(63), 'b'.repeat(64)),
    );
    const local = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9_'+-]{0,6}[A-Za-z0-9_+-](\.[A-Za-z0-9_+-]{1,4})?$/),
      fc.stringMatching(/^[A-Za-z0-9_'+.!#-]{1,10}$/),
    );
    const top = fc.oneof(fc.stringMatching(/^[A-Za-z]{2,6}$/), fc.stringMatching(/^[A-Za-z0-9-]{1,5}$/));
    const nearlyValid = fc
      .tuple(local, fc.array(label, { minLength: 1, maxLength: 3 }), top)
      .map(([l, labels, t]) => `${l}@${[...labels, t].join('.')}`);
    const address = fc.oneof(fc.emailAddress(), nearlyValid, fc.string({ maxLength: 30 }));
    let accepted = 0;
    fc.assert(
      fc.property(address, (candidate) => {
        const expected = Email.safeParse(candidate).success;
        if (expected) accepted += 1;
        for (const { mode, validate } of checks)
          if (validate(candidate) !== expected)
            throw new Error(`${JSON.stringify(candidate)}: validator ${expected}, ajv-formats ${mode} ${!expected}`);
      }),
      { numRuns: 5_000 },
    );
    expect(accepted, 'enough accepted addresses to compare on').toBeGreaterThan(200);
  });

  it('a@b-.com is answered 400 naming body.email', async () => {
    expectError(
      await invoke(routes.checkEmailAvailability, { body: { email: 'a@b-.com' }, ip: uniqueIp() }),
      400,
      'VALIDATION_FAILED',
      ['body.email'],
    );
  });
});

describe('security', () => {
  it('every operation declares the bearer scheme; one that needs no token adds the empty alternative', () => {
    for (const route of routeList) {
      const { security } = operationsById(document).get(route.operationId)!.operation;
      expect(security, route.operationId).toContainEqual({ bearerAuth: route.scope ? [route.scope] : [] });
      if (route.auth === 'none') expect(security, route.operationId).toEqual([{}, { bearerAuth: [] }]);
      else expect(security, route.operationId).toHaveLength(1);
    }
    const open = routeList.filter((r) => r.auth === 'none').map((r) => r.operationId);
    // The contract names these as needing no authentication.
    expect(open).toEqual(
      expect.arrayContaining([
        'checkEmailAvailability',
        'verifyEmail',
        'validateOrganizationName',
        'acceptInvitation',
        'rejectInvitation',
      ]),
    );
  });

  it('an operation that needs no token answers as usual when one is sent anyway', async () => {
    const body = { email: uniqueEmail('open') };
    const data = expectData(
      await invoke(routes.checkEmailAvailability, { body, token: 'not-a-token', ip: uniqueIp() }),
    );
    expect(data).toEqual({ isAvailable: true, type: null });
  });
});

describe('lists and required values', () => {
  it('acceptTerms is described as const true, and false is still answered 400 TERMS_NOT_ACCEPTED', async () => {
    expect(bodySchemaOf('register').properties.acceptTerms).toMatchObject({ type: 'boolean', const: true });
    const body = { name: 'Terms Refuser', email: uniqueEmail('terms'), password: 'long-enough-1', acceptTerms: false };
    expectError(await invoke(routes.register, { body, ip: uniqueIp() }), 400, 'TERMS_NOT_ACCEPTED');
  });

  it('every request list (top level of a body) is refused empty exactly where the description says minItems 1', async () => {
    const probed: string[] = [];
    for (const route of routeList) {
      const body = bodySchemaOf(route.operationId);
      for (const [name, property] of Object.entries((body.properties ?? {}) as Record<string, Json>)) {
        const list = resolveSchema(document, property);
        if (list.type !== 'array') continue;
        const request = ownerRequest(route.operationId);
        const sampled = (sampleValue(document, body) ?? {}) as Record<string, unknown>;
        const result = await invoke(route, {
          ...request,
          body: { ...sampled, ...(request.body as object), [name]: [] },
        });
        const refusedEmpty = result.status === 400;
        expect(
          refusedEmpty,
          `${route.operationId} ${name}=[] answered ${result.status} ${JSON.stringify(result.body?.error ?? {})}`,
        ).toBe((list.minItems ?? 0) >= 1);
        probed.push(`${route.operationId}.${name}`);
      }
    }
    expect(probed).toEqual(
      expect.arrayContaining([
        'generateToken.scopes',
        'updateTokenScopes.scopes',
        'inviteUsers.emails',
        'updateUserRoles.userIds',
        'register.inviteEmails',
      ]),
    );
  });

  it('generateToken with scopes [] is 400 UNSUPPORTED_SCOPE, as its minItems 1 says', async () => {
    expect(bodySchemaOf('generateToken').properties.scopes).toMatchObject({ minItems: 1 });
    expectError(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: [] } }),
      400,
      'UNSUPPORTED_SCOPE',
    );
  });
});

describe('trimming and the text rule', () => {
  it('marks x-trim on exactly the request strings the validator trims', () => {
    let marked = 0;
    for (const [operationId, definition] of definitions) {
      if (!definition.schemas.body) continue;
      // A body that is a union on a field (createImport) is described as oneOf: each branch against its option.
      const options = (definition.schemas.body as unknown as { _zod: { def: { options?: z.ZodMiniType[] } } })._zod.def
        .options ?? [definition.schemas.body];
      const described = bodySchemaOf(operationId);
      const branches = (described.oneOf as Json[] | undefined) ?? [described];
      expect(branches, operationId).toHaveLength(options.length);
      for (const [index, option] of options.entries()) {
        const shape = shapeOf(option);
        for (const [name, property] of Object.entries(
          (resolveSchema(document, branches[index]!).properties ?? {}) as Record<string, Json>,
        )) {
          const schema = resolveSchema(document, property);
          if (schema.type !== 'string' || schema.format || schema.pattern) continue;
          const value = String(sampleValue(document, schema));
          const parsed = shape[name]!.safeParse(`  ${value}\t`);
          const trims = parsed.success && parsed.data === value;
          expect(schema['x-trim'] === true, `${operationId} ${name}`).toBe(trims);
          if (trims) {
            marked += 1;
            expect(schema.description).toContain(TRIM_NOTE);
          }
        }
      }
    }
    expect(marked).toBeGreaterThan(5);
  });

  it('a field marked x-trim comes back trimmed; one without it comes back as sent', async () => {
    const user = await createUser();
    const properties = bodySchemaOf('updateProfile').properties;
    expect(resolveSchema(document, properties.name)['x-trim']).toBe(true);
    expect(resolveSchema(document, properties.onboardingStatus)['x-trim']).toBeUndefined();
    const data = expectData(
      await invoke(routes.updateProfile, {
        token: user.accessToken,
        body: { name: '  Ann Lee \n', onboardingStatus: ' step two ' },
      }),
    );
    expect(data).toMatchObject({ name: 'Ann Lee', onboardingStatus: ' step two ' });
  });

  it('states the NUL and unpaired-surrogate rule once for every operation, and a NUL is 400 naming the field', async () => {
    expect(document.info.description).toContain(TEXT_RULE);
    expect(TEXT_RULE).toContain(UNSTORABLE_TEXT_MESSAGE);
    expect(document.components.responses.BadRequest.description).toMatch(/NUL/);
    const request = ownerRequest('updateProfile');
    expectError(
      await invoke(routes.updateProfile, { ...request, body: { onboardingStatus: 'a\u0000b' } }),
      400,
      'VALIDATION_FAILED',
      ['body.onboardingStatus'],
    );
    expectError(
      await invoke(routes.updateProfile, { ...request, body: { userType: 'a\uD800b' } }),
      400,
      'VALIDATION_FAILED',
      ['body.userType'],
    );
  });
});

describe('ids and unknown body fields', () => {
  it('describes every id a client sends as text of 1 to 200 characters, never as a uuid', () => {
    expect(requestSchemas().filter((schema) => schema.format === 'uuid')).toEqual([]);
    for (const route of routeList) {
      for (const parameter of parametersOf(route.operationId).filter((p) => p.in === 'path' && p.name !== 'slug')) {
        expect(parameter.schema, `${route.operationId} ${parameter.name}`).toEqual({
          type: 'string',
          minLength: 1,
          maxLength: MAX_ID_LENGTH,
        });
      }
    }
  });

  it('never says additionalProperties false on a request object: unknown body fields are ignored', async () => {
    expect(requestSchemas().filter((schema) => schema.additionalProperties === false)).toEqual([]);
    const data = expectData(
      await invoke(routes.checkEmailAvailability, {
        body: { email: uniqueEmail('extra'), deviceId: 'desktop-7', isSuperAdmin: true },
        ip: uniqueIp(),
      }),
    );
    expect(data).toEqual({ isAvailable: true, type: null });
  });

  it('a short malformed path id gets the unknown-id answer, not 400', async () => {
    expectError(await invoke(routes.revokeToken, { token: owner.accessToken, path: { id: 'abc' } }), 404, 'NOT_FOUND');
    expectError(
      await invoke(routes.getOrganization, { token: owner.accessToken, path: { orgId: 'acme' } }),
      403,
      'NOT_A_MEMBER',
    );
    expectError(
      await invoke(routes.revokeToken, { token: owner.accessToken, path: { id: 'x'.repeat(MAX_ID_LENGTH + 1) } }),
      400,
      'VALIDATION_FAILED',
      ['path.id'],
    );
  });
});
