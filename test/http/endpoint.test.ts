import { eq } from 'drizzle-orm';
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { db } from '../../lib/db/client';
import { organizationMembers, organizationPlans } from '../../lib/db/schema';
import { endpoint } from '../../lib/http/endpoint';
import { BadRequestError } from '../../lib/http/errors';
import type { RouteDefinition } from '../../lib/http/route';
import type { ApiContext } from '../../lib/http/types';
import { createUser, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';

/** A route that is not in the table, to exercise the middleware chain around one-line handlers. */
const probeRoute = (changes: Partial<RouteDefinition>): RouteDefinition => ({
  operationId: 'probe',
  method: 'POST',
  path: '/probe/{orgId}',
  handler: 'functions/probe.ts',
  summary: 'probe',
  auth: 'bearer',
  scope: 'organization:read',
  internal: false,
  successStatus: 200,
  throttle: { rate: 1, burst: 1 },
  ...changes,
});

async function call(
  handler: ReturnType<typeof endpoint>,
  route: RouteDefinition,
  request: { url?: string; headers?: Record<string, string>; body?: string; path?: Record<string, string> } = {},
) {
  const event = buildApiGatewayEvent(
    route,
    { method: route.method, url: request.url ?? '/probe/x', headers: request.headers ?? {}, body: request.body },
    request.path ?? {},
  );
  const result = await handler(event, buildLambdaContext(route) as ApiContext);
  return {
    status: result.statusCode!,
    headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)])),
    body: result.body ? JSON.parse(result.body) : undefined,
  };
}

describe('validation', () => {
  const route = probeRoute({ auth: 'none', scope: null });
  const handler = endpoint(
    route,
    {
      body: z.strictObject({ name: z.string().check(z.maxLength(5)), count: z.int() }),
      query: z.object({
        page: z.optional(z.coerce.number().check(z.minimum(1))),
        tags: z.optional(z.array(z.string())),
      }),
      path: z.object({ orgId: z.uuid() }),
    },
    async ({ body, query, path }) => ({ body, query, path }),
  );

  it('hands the parsed body, query (repeated keys as arrays) and path to the handler', async () => {
    const id = '01a2028b-8234-78ea-a301-3af91dee41ca';
    const result = await call(handler, route, {
      url: `/probe/${id}?page=2&tags=a&tags=b`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'abc', count: 3 }),
      path: { orgId: id },
    });
    expect(expectData(result)).toEqual({
      body: { name: 'abc', count: 3 },
      query: { page: 2, tags: ['a', 'b'] },
      path: { orgId: id },
    });
  });

  it('reports every bad field at once with its location', async () => {
    const result = await call(handler, route, {
      url: '/probe/nope?page=0',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'too long', count: 1.5, extra: 1 }),
      path: { orgId: 'nope' },
    });
    expectError(result, 400, 'VALIDATION_FAILED', ['body.name', 'body.count', 'body', 'query.page', 'path.orgId']);
  });

  it('refuses NUL characters anywhere in the input (Postgres stores none) with the field named', async () => {
    const id = '01a2028b-8234-78ea-a301-3af91dee41ca';
    const result = await call(handler, route, {
      url: `/probe/${id}?tags=ok&tags=a%00b`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'a\u0000', count: 1 }),
      path: { orgId: id },
    });
    expectError(result, 400, 'VALIDATION_FAILED', ['body.name', 'query.tags.1']);
  });

  it('refuses lone surrogates and NUL characters however deep they sit, and never answers 500 for deep input', async () => {
    const id = '01a2028b-8234-78ea-a301-3af91dee41ca';
    const nested = (depth: number) => `${'['.repeat(depth)}"x\\u0000"${']'.repeat(depth)}`;
    const send = (deep: string) =>
      call(handler, route, {
        url: `/probe/${id}`,
        headers: { 'content-type': 'application/json' },
        body: `{"name": "\\ud800", "count": 1, "deep": ${deep}}`,
        path: { orgId: id },
      });
    const result = await send(nested(2_000));
    expectError(result, 400, 'VALIDATION_FAILED', ['body.name', `body.deep${'.0'.repeat(2_000)}`]);
    // Far deeper than any client sends: the JSON parser refuses it, still as bad input.
    expectError(await send(nested(100_000)), 400, 'MALFORMED_JSON');
  });

  it('ignores a JSON content type on a request without a body', async () => {
    const getRoute = probeRoute({ auth: 'none', scope: null, method: 'GET' });
    const handler = endpoint(getRoute, {}, async () => ({ ok: true }));
    expect(expectData(await call(handler, getRoute, { headers: { 'content-type': 'application/json' } }))).toEqual({
      ok: true,
    });
  });

  it('answers 400 for a missing body and for a body that is not JSON', async () => {
    expectError(await call(handler, route, { path: { orgId: 'x' } }), 400, 'VALIDATION_FAILED', ['body']);
    expectError(
      await call(handler, route, { headers: { 'content-type': 'application/json' }, body: '{', path: { orgId: 'x' } }),
      400,
      'MALFORMED_JSON',
    );
  });
});

describe('envelopes, request id and CORS', () => {
  it('hides the message of an unexpected error behind 500 INTERNAL', async () => {
    const route = probeRoute({ auth: 'none', scope: null });
    const handler = endpoint(route, {}, async () => {
      throw new Error('connection to db-secret-host failed');
    });
    const result = await call(handler, route);
    expectError(result, 500, 'INTERNAL');
    expect(JSON.stringify(result.body)).not.toContain('db-secret-host');
  });

  it('passes a typed error through with its code, and CORS and request id headers', async () => {
    const route = probeRoute({ auth: 'none', scope: null });
    const handler = endpoint(route, {}, async () => {
      throw new BadRequestError('nope', 'TOKEN_EXPIRED');
    });
    const result = await call(handler, route, {
      headers: { origin: 'https://app.example.test', 'x-request-id': 'req-12345678' },
    });
    expectError(result, 400, 'TOKEN_EXPIRED');
    expect(result.body.requestId).toBe('req-12345678');
    expect(result.headers['x-request-id']).toBe('req-12345678');
    expect(result.headers['access-control-allow-origin']).toBeTruthy();
  });

  it('replaces an unsafe x-request-id', async () => {
    const route = probeRoute({ auth: 'none', scope: null });
    const handler = endpoint(route, {}, async () => ({ ok: true }));
    const result = await call(handler, route, { headers: { 'x-request-id': 'bad id\nwith newline' } });
    expect(result.headers['x-request-id']).not.toContain('bad id');
    expect(result.headers['x-request-id']!.length).toBeGreaterThan(8);
  });

  it('answers 204 with no body, and a no-data envelope without data', async () => {
    const noContent = probeRoute({ auth: 'none', scope: null, successStatus: 204 });
    const empty = await call(
      endpoint(noContent, {}, async () => ({ ignored: true })),
      noContent,
    );
    expect(empty).toMatchObject({ status: 204, body: undefined });

    const noData = probeRoute({ auth: 'none', scope: null, envelope: 'no-data' });
    const result = await call(
      endpoint(noData, {}, async () => ({ ignored: true })),
      noData,
    );
    expect(result.status).toBe(200);
    expect(result.body).toEqual({ statusCode: 200, timestamp: expect.any(String) });
  });
});

describe('organization context, roles, plan and super admin', () => {
  const adminRoute = probeRoute({ organization: { from: 'header', role: 'admin-or-owner', activePlan: true } });
  const adminHandler = endpoint(adminRoute, {}, async ({ organization }) => organization);
  const pathRoute = probeRoute({ organization: { from: 'path', role: 'any-role' } });
  const pathHandler = endpoint(
    pathRoute,
    { path: z.object({ orgId: z.uuid() }) },
    async ({ organization }) => organization,
  );

  it('gives the handler the organization and the caller role', async () => {
    const owner = await createUser();
    const result = await call(adminHandler, adminRoute, {
      headers: { authorization: `Bearer ${owner.accessToken}`, organization: owner.organizationId },
    });
    expect(expectData(result)).toEqual({ id: owner.organizationId, role: 'owner', planActive: true });
    const byPath = await call(pathHandler, pathRoute, {
      headers: { authorization: `Bearer ${owner.accessToken}` },
      path: { orgId: owner.organizationId },
    });
    expect(expectData(byPath)).toMatchObject({ id: owner.organizationId, role: 'owner' });
  });

  it('answers 400 naming headers.organization when it is missing or over 200 characters', async () => {
    const owner = await createUser();
    const auth = { authorization: `Bearer ${owner.accessToken}` };
    expectError(await call(adminHandler, adminRoute, { headers: auth }), 400, 'VALIDATION_FAILED', [
      'headers.organization',
    ]);
    expectError(
      await call(adminHandler, adminRoute, { headers: { ...auth, organization: 'o'.repeat(201) } }),
      400,
      'VALIDATION_FAILED',
      ['headers.organization'],
    );
  });

  it('answers 403 NOT_A_MEMBER for an organization header that is not an id, as for an unknown organization', async () => {
    const owner = await createUser();
    expectError(
      await call(adminHandler, adminRoute, {
        headers: { authorization: `Bearer ${owner.accessToken}`, organization: 'acme' },
      }),
      403,
      'NOT_A_MEMBER',
    );
  });

  it('gives the handler the stored (lowercase) organization id when the header names it in upper case', async () => {
    const owner = await createUser();
    const result = await call(adminHandler, adminRoute, {
      headers: { authorization: `Bearer ${owner.accessToken}`, organization: owner.organizationId.toUpperCase() },
    });
    expect(expectData(result)).toMatchObject({ id: owner.organizationId, role: 'owner' });
  });

  it('answers 403 for another organization, a role below the rule, and an inactive plan', async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const headersOf = (token: string) => ({ authorization: `Bearer ${token}`, organization: owner.organizationId });

    expectError(
      await call(adminHandler, adminRoute, { headers: headersOf(stranger.accessToken) }),
      403,
      'NOT_A_MEMBER',
    );
    expectError(
      await call(pathHandler, pathRoute, {
        headers: { authorization: `Bearer ${stranger.accessToken}` },
        path: { orgId: owner.organizationId },
      }),
      403,
      'NOT_A_MEMBER',
    );

    await db()
      .insert(organizationMembers)
      .values({ organizationId: owner.organizationId, userId: stranger.id, role: 'billing' });
    expectError(
      await call(adminHandler, adminRoute, { headers: headersOf(stranger.accessToken) }),
      403,
      'INSUFFICIENT_ROLE',
    );

    await db().update(organizationMembers).set({ role: 'admin' }).where(eq(organizationMembers.userId, stranger.id));
    expectData(await call(adminHandler, adminRoute, { headers: headersOf(stranger.accessToken) }));

    await db()
      .update(organizationPlans)
      .set({ isActive: false })
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    expectError(
      await call(adminHandler, adminRoute, { headers: headersOf(stranger.accessToken) }),
      403,
      'NO_ACTIVE_PLAN',
    );
  });

  it('lets only super admins through a super-admin route', async () => {
    const route = probeRoute({ superAdmin: true });
    const handler = endpoint(route, {}, async ({ actor }) => ({ userId: actor!.user.id }));
    const user = await createUser();
    expectError(
      await call(handler, route, { headers: { authorization: `Bearer ${user.accessToken}` } }),
      403,
      'FORBIDDEN',
    );
    await updateUserRow(user.id, { isSuperAdmin: true });
    expect(
      expectData(await call(handler, route, { headers: { authorization: `Bearer ${user.accessToken}` } })),
    ).toEqual({ userId: user.id });
  });

  it('checks the scope of an automation token against the route', async () => {
    const user = await createUser();
    const token = async (scopes: string[]) =>
      expectData(await invoke(routes.generateToken, { token: user.accessToken, body: { scopes } })).token as string;
    const route = probeRoute({ scope: 'organization:read' });
    const handler = endpoint(route, {}, async () => ({ ok: true }));
    expectData(
      await call(handler, route, { headers: { authorization: `Bearer ${await token(['organization:read'])}` } }),
    );
    expectError(
      await call(handler, route, { headers: { authorization: `Bearer ${await token(['billing:read'])}` } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });
});
