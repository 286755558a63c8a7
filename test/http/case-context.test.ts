import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import type { Actor } from '../../lib/auth/actor';
import {
  CaseAccessDeniedError,
  CaseInOtherOrganizationError,
  CaseNotFoundError,
  NoCaseAccessError,
} from '../../lib/cases/errors';
import { type CaseAccess, CASE_RULES } from '../../lib/cases/rules';
import { db } from '../../lib/db/client';
import { caseAccess } from '../../lib/db/schema';
import { caseContext } from '../../lib/http/case-context';
import { endpoint } from '../../lib/http/endpoint';
import type { RouteDefinition } from '../../lib/http/route';
import type { ApiContext, ApiEvent, ApiResult, ApiState } from '../../lib/http/types';
import { addMember, createCaseRow, createUser, type TestUser } from '../harness/actors';
import { expectData, expectError } from '../harness/invoke';

/** A route that is not in the table, to exercise the middleware around a one-line handler. */
const probeRoute = (changes: Partial<RouteDefinition>): RouteDefinition => ({
  operationId: 'probe',
  method: 'GET',
  path: '/probe/{caseId}/{userId}',
  handler: 'functions/probe.ts',
  summary: 'probe',
  auth: 'bearer',
  scope: null,
  internal: false,
  successStatus: 200,
  throttle: { rate: 1, burst: 1 },
  ...changes,
});

const actorOf = (user: TestUser): Actor => ({
  user: { id: user.id, email: user.email, name: user.name, isSuperAdmin: false, isEmailVerified: true },
  session: { id: randomUUID(), kind: 'login', scopes: null },
});

/** Runs the middleware alone, with what the earlier middleware would have set, around a handler that returns the case context. */
function runCaseContext(route: RouteDefinition, api: Partial<ApiState>) {
  const handler = middy<ApiEvent, ApiResult, Error, ApiContext>()
    .use(caseContext(route))
    .handler(async (_event, context) => context.api.caseContext as unknown as ApiResult);
  const context = { ...buildLambdaContext(route), api: { requestId: 'r', ip: '', userAgent: undefined, ...api } };
  return handler({} as ApiEvent, context);
}

/** A case of a fresh organization, its owner, and a member holding `access` to it (null: none). */
async function scenario(access: CaseAccess | null, role: 'member' | 'admin' | 'owner' = 'member') {
  const owner = await createUser();
  const row = await createCaseRow(owner.organizationId);
  await db().insert(caseAccess).values({ caseId: row.id, userId: owner.id, access: 'owner' });
  const caller = role === 'owner' ? owner : await addMember(owner.organizationId, role);
  if (access && caller !== owner) await db().insert(caseAccess).values({ caseId: row.id, userId: caller.id, access });
  const organization = { id: owner.organizationId, role, planActive: true };
  return { owner, caller, row, organization };
}

describe('caseContext middleware', () => {
  it('hands the handler the case, the access and the organization role, from the path', async () => {
    // Prepare
    const { caller, row, organization } = await scenario('viewer');
    // Act
    const found = await runCaseContext(probeRoute({ case: CASE_RULES.read }), {
      actor: actorOf(caller),
      organization,
      path: { caseId: row.id.toUpperCase() },
    });
    // Assess
    expect(found).toMatchObject({ case: { id: row.id, name: row.name }, access: 'viewer', orgRole: 'member' });
  });

  it('reads the case id from the query where the route takes it there', async () => {
    const { caller, row } = await scenario('admin');
    const found = await runCaseContext(probeRoute({ path: '/probe', case: CASE_RULES.import }), {
      actor: actorOf(caller),
      query: { caseId: row.id },
    });
    expect(found).toMatchObject({ case: { id: row.id }, access: 'admin' });
  });

  it('does nothing on a route without a case rule', async () => {
    const { caller, row } = await scenario(null);
    const found = await runCaseContext(probeRoute({}), { actor: actorOf(caller), path: { caseId: row.id } });
    expect(found).toBeUndefined();
  });

  it.each([
    ['an unknown case', async () => randomUUID()],
    ['a case id that is not a UUID', async () => 'case-1'],
    [
      'a deleted case',
      async (organizationId: string) => (await createCaseRow(organizationId, { deletedAt: new Date() })).id,
    ],
  ])('refuses %s as not found', async (_label, caseIdOf) => {
    const { caller, organization } = await scenario(null, 'owner');
    const caseId = await caseIdOf(organization.id);
    await expect(
      runCaseContext(probeRoute({ case: CASE_RULES.read }), { actor: actorOf(caller), path: { caseId } }),
    ).rejects.toBeInstanceOf(CaseNotFoundError);
  });

  it('refuses a case of another organization than the request names, whatever the access', async () => {
    const { caller, row } = await scenario('owner');
    const other = await createUser();
    await expect(
      runCaseContext(probeRoute({ case: CASE_RULES.read }), {
        actor: actorOf(caller),
        organization: { id: other.organizationId, role: 'owner', planActive: true },
        path: { caseId: row.id },
      }),
    ).rejects.toBeInstanceOf(CaseInOtherOrganizationError);
  });

  it.each(['member', 'owner'] as const)(
    'refuses an organization %s without access to the case, even on the read rule',
    async (role) => {
      const owner = await createUser();
      const row = await createCaseRow(owner.organizationId);
      const caller = role === 'owner' ? owner : await addMember(owner.organizationId, role);
      await expect(
        runCaseContext(probeRoute({ case: CASE_RULES.read }), { actor: actorOf(caller), path: { caseId: row.id } }),
      ).rejects.toBeInstanceOf(NoCaseAccessError);
    },
  );

  it('refuses a non-member holding access to the case', async () => {
    const { row } = await scenario(null);
    const outsider = await createUser();
    await db().insert(caseAccess).values({ caseId: row.id, userId: outsider.id, access: 'owner' });
    await expect(
      runCaseContext(probeRoute({ case: CASE_RULES.read }), { actor: actorOf(outsider), path: { caseId: row.id } }),
    ).rejects.toBeInstanceOf(NoCaseAccessError);
  });

  it.each([
    ['manage', 'viewer', CASE_RULES.manage.denied],
    ['delete', 'admin', CASE_RULES.delete.denied],
    ['billing', 'viewer', CASE_RULES.billing.denied],
    ['billing', 'opposing_counsel', CASE_RULES.billing.deniedTo.opposing_counsel],
    ['import', 'viewer', CASE_RULES.import.denied],
    ['upload', 'viewer', CASE_RULES.upload.denied],
  ] as const)('refuses the %s rule to %s access, in the rule words', async (name, access, message) => {
    const { caller, row } = await scenario(access);
    const refusal = runCaseContext(probeRoute({ case: CASE_RULES[name] }), {
      actor: actorOf(caller),
      path: { caseId: row.id },
    });
    await expect(refusal).rejects.toBeInstanceOf(CaseAccessDeniedError);
    await expect(refusal).rejects.toMatchObject({ code: 'INSUFFICIENT_ROLE', message });
  });

  it('lets an organization owner or admin with any access through the rules that name their role', async () => {
    const { caller, row } = await scenario('viewer', 'admin');
    const found = await runCaseContext(probeRoute({ case: CASE_RULES.manage }), {
      actor: actorOf(caller),
      path: { caseId: row.id },
    });
    expect(found).toMatchObject({ access: 'viewer', orgRole: 'admin' });
  });

  it('with `self`, lets any access act on the caller themselves (in any letter case), but not on others', async () => {
    const { caller, owner, row } = await scenario('opposing_counsel');
    const route = probeRoute({ case: { ...CASE_RULES.manage, self: 'userId' } });
    const found = await runCaseContext(route, {
      actor: actorOf(caller),
      path: { caseId: row.id, userId: caller.id.toUpperCase() },
    });
    expect(found).toMatchObject({ access: 'opposing_counsel' });
    await expect(
      runCaseContext(route, { actor: actorOf(caller), path: { caseId: row.id, userId: owner.id } }),
    ).rejects.toBeInstanceOf(CaseAccessDeniedError);
  });

  it('with `self`, still needs some access to the case', async () => {
    const { caller, row } = await scenario(null);
    await expect(
      runCaseContext(probeRoute({ case: { ...CASE_RULES.manage, self: 'userId' } }), {
        actor: actorOf(caller),
        path: { caseId: row.id, userId: caller.id },
      }),
    ).rejects.toBeInstanceOf(NoCaseAccessError);
  });

  it('fails loudly for a case rule on a route without bearer auth or without a case id', async () => {
    const { caller, row } = await scenario('owner');
    await expect(runCaseContext(probeRoute({ case: CASE_RULES.read }), { path: { caseId: row.id } })).rejects.toThrow(
      /no bearer auth/,
    );
    await expect(
      runCaseContext(probeRoute({ case: CASE_RULES.read }), { actor: actorOf(caller), path: {} }),
    ).rejects.toThrow(/no caseId/);
  });
});

/**
 * Every route of the table with a case rule, behind the real middleware chain (endpoint) but
 * around a handler that only records that it ran: the rule alone, never the domain code, keeps a
 * caller the rule refuses from reaching it.
 */
describe('routes with a case rule', () => {
  const caseRoutes = routeList.filter((route) => route.case);

  /** A stand-in handler for `route`: path parameters and the case id as plain text, no body. */
  function probeHandler(route: RouteDefinition, ran: string[]) {
    const caseInPath = route.path.includes('{caseId}');
    return endpoint(
      route,
      {
        path: route.path.includes('{') ? z.record(z.string(), z.string()) : undefined,
        query: caseInPath ? undefined : z.object({ caseId: z.string() }),
      },
      async ({ caseContext }) => {
        ran.push(caseContext!.case.id);
        return { ok: true };
      },
    );
  }

  async function send(route: RouteDefinition, caller: TestUser, caseId: string, ran: string[]) {
    const path: Record<string, string> = {};
    const url = route.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => {
      path[name] = name === 'caseId' ? caseId : randomUUID();
      return path[name];
    });
    const event = buildApiGatewayEvent(
      route,
      {
        method: route.method,
        url: route.path.includes('{caseId}') ? url : `${url}?caseId=${caseId}`,
        headers: { authorization: `Bearer ${caller.accessToken}`, organization: caller.organizationId },
        sourceIp: `198.51.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
      },
      path,
    );
    const result = await probeHandler(route, ran)(event, buildLambdaContext(route) as ApiContext);
    return { status: result.statusCode!, headers: {}, body: result.body ? JSON.parse(result.body) : undefined };
  }

  it('covers the case routes of the table', () => {
    expect(caseRoutes.length).toBeGreaterThan(10);
  });

  it.each(caseRoutes.map((route) => [route.operationId, route] as const))(
    '%s: refuses a member without access to the case and never runs the handler',
    async (_operationId, route) => {
      // Prepare: a member of the case's organization who holds no access to the case
      const owner = await createUser();
      const row = await createCaseRow(owner.organizationId);
      await db().insert(caseAccess).values({ caseId: row.id, userId: owner.id, access: 'owner' });
      const member = await addMember(owner.organizationId, 'member');
      const ran: string[] = [];
      // Act
      const refused = await send(route, { ...member, organizationId: owner.organizationId }, row.id, ran);
      const allowed = await send(route, owner, row.id, ran);
      // Assess
      expectError(refused, 403, 'INSUFFICIENT_ROLE');
      expect(expectData(allowed, route.successStatus)).toEqual({ ok: true });
      expect(ran).toEqual([row.id]);
    },
  );

  it.each(caseRoutes.filter((route) => !route.case!.access.includes('viewer')).map((r) => [r.operationId, r] as const))(
    '%s: refuses viewer access, the rule asking for more, and never runs the handler',
    async (_operationId, route) => {
      const owner = await createUser();
      const row = await createCaseRow(owner.organizationId);
      const viewer = await addMember(owner.organizationId, 'member');
      await db().insert(caseAccess).values({ caseId: row.id, userId: viewer.id, access: 'viewer' });
      const ran: string[] = [];

      const result = await send(route, { ...viewer, organizationId: owner.organizationId }, row.id, ran);

      expectError(result, 403, 'INSUFFICIENT_ROLE');
      expect(result.body.error.message).toBe(route.case!.denied);
      expect(ran).toEqual([]);
    },
  );
});
