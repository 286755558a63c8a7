import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeList, routes } from '../../functions/routes';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { type LambdaHandler, loadHandler } from '../../infra/local/router';
import type { Json, RouteWithSchemas } from '../../infra/openapi/document';
import { openLoginSession } from '../../lib/auth/sessions';
import { db } from '../../lib/db/client';
import { organizationPlans } from '../../lib/db/schema';
import { endpoint } from '../../lib/http/endpoint';
import type { RouteDefinition } from '../../lib/http/route';
import { TERMS_VERSION } from '../../lib/users';
import { ipSequence, loadContract } from '../contract/support/setup';
import { type RequestSubject, validRequest } from '../contract/support/requests';
import { createUser, type TestUser, uniqueEmail, userRow } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { organizationRow } from '../harness/organizations';

/**
 * Tolerant reader: body fields the contract does not show are ignored, never refused (clients
 * newer than the service send more), and never reach the domain (no mass assignment).
 */

const uniqueIp = ipSequence('198.51');

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

describe('a JSON body with a field the contract does not show', () => {
  let document: Json;
  let definitions: Map<string, RouteWithSchemas>;
  let owner: TestUser;
  let subject: RequestSubject;

  beforeAll(async () => {
    ({ document, definitions } = await loadContract());
    owner = await createUser();
    subject = {
      organizationId: owner.organizationId,
      organizationSlug: (await organizationRow(owner.organizationId)).slug,
    };
  });

  const takesJsonBody = (route: RouteDefinition) =>
    !route.rawBody && definitions.get(route.operationId)?.schemas.body !== undefined;

  it('is a case of at least the sign-in, sign-up and update routes', () => {
    const names = routeList.filter(takesJsonBody).map((route) => route.operationId);
    expect(names).toEqual(
      expect.arrayContaining([
        'login',
        'register',
        'updateProfile',
        'updateOrganization',
        'createOrganization',
        'generateToken',
      ]),
    );
  });

  it.each(routeList.map((route) => [`${route.method} ${route.path}`, route] as const))(
    'is not refused by %s',
    async (_label, route) => {
      if (!takesJsonBody(route)) return;
      // Prepare: the smallest valid request, plus a field no schema knows.
      const request = validRequest(document, definitions.get(route.operationId)!, subject);
      const body = { ...(isPlainObject(request.body) ? request.body : {}), someFutureField: 1 };
      const token =
        route.auth === 'none' ? undefined : (await openLoginSession(db(), owner.id, null)).tokens.accessToken;
      // Act
      const result = await invoke(route, { ...request, body, token, ip: uniqueIp() });
      // Assess: whatever the route answers (a rule of its own may still refuse the sample), the
      // extra field is not what it refuses, and nothing crashes.
      const details: Array<{ path: string; message: string }> = result.body?.error?.details ?? [];
      expect(
        details.filter((d) => d.path === 'body' || `${d.path} ${d.message}`.includes('someFutureField')),
        JSON.stringify(result.body),
      ).toEqual([]);
      expect(result.status, JSON.stringify(result.body)).toBeLessThan(500);
    },
  );
});

describe('fields of newer clients', () => {
  it('signs in with a deviceId beside the credentials (200)', async () => {
    const user = await createUser();
    const data = expectData(
      await invoke(routes.login, { body: { email: user.email, password: user.password, deviceId: 'iphone-15-abc' } }),
    );
    expect(data.userProfile.id).toBe(user.id);
  });

  it('signs up with a termsVersion beside the fields (200); the service records its own terms version', async () => {
    const email = uniqueEmail('terms');
    const body = {
      name: 'Terry Terms',
      email,
      password: 'a-long-password',
      acceptTerms: true,
      termsVersion: '1999-01',
    };
    const data = expectData(await invoke(routes.register, { body }));
    expect(data.userProfile.email).toBe(email);
    expect((await userRow(data.userProfile.id)).termsVersion).toBe(TERMS_VERSION);
  });
});

describe('no mass assignment', () => {
  it('PATCH /organization/{orgId} ignores isActive, activePlan, isPriority, slug and other fields it does not edit', async () => {
    // Prepare
    const owner = await createUser();
    const before = await organizationRow(owner.organizationId);
    const [planBefore] = await db()
      .select()
      .from(organizationPlans)
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    // Act: what a client might send back after a GET, with changes it has no right to.
    const result = await invoke(routes.updateOrganization, {
      token: owner.accessToken,
      path: { orgId: owner.organizationId },
      body: {
        city: 'Lisbon',
        isActive: false,
        activePlan: { type: 'enterprise', seats: 1000, isActive: true },
        isPriority: true,
        slug: 'hijacked-slug',
        id: '00000000-0000-4000-8000-000000000000',
        version: 'eu',
        billingMode: 'pay_as_you_go',
        creditBalanceCents: 1_000_000,
        bankLinkingTerms: { accepted: true, acceptedAt: '2020-01-01T00:00:00.000Z', acceptedBy: owner.id },
      },
    });
    // Assess
    const data = expectData(result, 201);
    expect(data.organization).toMatchObject({
      id: owner.organizationId,
      city: 'Lisbon',
      isActive: true,
      isPriority: false,
      slug: before.slug,
      version: before.version,
    });
    expect(data.organization.bankLinkingTerms).toEqual({ accepted: false, acceptedAt: null, acceptedBy: null });
    const after = await organizationRow(owner.organizationId);
    expect(after).toEqual({ ...before, city: 'Lisbon', updatedAt: after.updatedAt });
    const [planAfter] = await db()
      .select()
      .from(organizationPlans)
      .where(eq(organizationPlans.organizationId, owner.organizationId));
    expect(planAfter).toEqual(planBefore);
  });

  it('PATCH /user/profile ignores isSuperAdmin, isEmailVerified, email and other fields it does not edit', async () => {
    // Prepare
    const user = await createUser({ name: 'Plain User' });
    const before = await userRow(user.id);
    // Act
    const result = await invoke(routes.updateProfile, {
      token: user.accessToken,
      body: {
        name: 'Still Plain',
        isSuperAdmin: true,
        isEmailVerified: true,
        email: uniqueEmail('takeover'),
        isActive: false,
        accountKind: 'extraction_only',
        passwordHash: 'scrypt$forged',
        id: '00000000-0000-4000-8000-000000000000',
      },
    });
    // Assess
    const profile = expectData(result);
    expect(profile).toMatchObject({ id: user.id, name: 'Still Plain', email: user.email, isEmailVerified: false });
    const after = await userRow(user.id);
    expect(after).toEqual({ ...before, name: 'Still Plain', updatedAt: after.updatedAt });
  });

  it.each([
    {
      route: routes.updateProfile,
      body: { name: '  Parsed Name ', onboardingStep: 2, isSuperAdmin: true, email: 'x@example.com' },
      parsed: { name: 'Parsed Name', onboardingStep: 2 },
    },
    {
      route: routes.updateOrganization,
      body: {
        city: 'Porto',
        isActive: false,
        address: { line1: '1 Rua', floor: 3 },
        bankLinkingTermsAcceptedAt: '2020-01-01',
      },
      parsed: { city: 'Porto', address: { line1: '1 Rua' } },
    },
  ])('hands the domain only the parsed fields of $route.operationId', async ({ route, body, parsed }) => {
    // Prepare: the route's own schemas and middleware chain, with a domain function that records its input.
    const owner = await createUser();
    const { schemas } = ((await loadHandler(route)) as unknown as { definition: RouteWithSchemas }).definition;
    let received: unknown;
    const handler = endpoint(route, schemas, async (input) => {
      received = input.body;
      return {};
    });
    const path: Record<string, string> = route.path.includes('{orgId}') ? { orgId: owner.organizationId } : {};
    const url = route.path.replace('{orgId}', owner.organizationId);
    const event = buildApiGatewayEvent(
      route,
      {
        method: route.method,
        url,
        headers: { authorization: `Bearer ${owner.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      },
      path,
    );
    // Act
    const result = await (handler as unknown as LambdaHandler)(event, buildLambdaContext(route));
    // Assess
    expect(result.statusCode, String(result.body)).toBe(route.successStatus);
    expect(received).toEqual(parsed);
  });
});
