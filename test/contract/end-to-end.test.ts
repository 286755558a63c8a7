import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { matchRoute } from '../../infra/local/router';
import { type ApiClient, createApiClient } from '../../infra/openapi/client';
import type { Json, RouteWithSchemas } from '../../infra/openapi/document';
import { tokenFromEmail, uniqueEmail, updateUserRow } from '../harness/actors';
import { mailSink } from '../harness/setup';
import type { ContractChecker } from './support/contract';
import { loadContract } from './support/setup';
import { validRequest } from './support/requests';

/**
 * The service as a client sees it: a flow through the local server over HTTP with the typed client
 * generated from the OpenAPI document (infra/openapi/client.ts). Every answer the server sends is
 * checked against the document's schema for its route and status (ajv), so a handler that drifts
 * from the description fails here. Routes the flow does not reach get one request built from the
 * document, so every route of the table is checked over HTTP at least once.
 */

let server: Server;
let base: string;
let document: Json;
let checker: ContractChecker;
let definitions: Map<string, RouteWithSchemas>;
const problems: string[] = [];
const successes = new Set<string>();

/** fetch through the local server, checking every answer against the document. */
async function checkedFetch(request: Request): Promise<Response> {
  const response = await fetch(request);
  const match = matchRoute(request.method, new URL(request.url).pathname);
  if (match.kind !== 'found') {
    problems.push(`${request.method} ${request.url} is no route of the table (${response.status})`);
    return response;
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  const found = checker.check(match.route.operationId, {
    status: response.status,
    headers,
    text: await response.clone().text(),
  });
  problems.push(...found);
  if (response.status < 300) successes.add(match.route.operationId);
  return response;
}

let session: { accessToken?: string } = {};
let api: ApiClient;

/** The envelope's `data`, failing with the error envelope when the call did not succeed. */
function ok<T extends { data?: unknown; error?: unknown; response: Response }>(result: T): NonNullable<T['data']> {
  expect(result.error, `${result.response.status} ${JSON.stringify(result.error)}`).toBeUndefined();
  return result.data as NonNullable<T['data']>;
}

beforeAll(async () => {
  ({ document, checker, definitions } = await loadContract());
  server = createLocalServer({ mailSink });
  base = await listen(server, 0);
  api = createApiClient({ baseUrl: base, token: () => session.accessToken, fetch: checkedFetch });
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('end to end over HTTP with the typed client', () => {
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const email = uniqueEmail('e2e-owner');
  const urls = {
    successUrl: 'https://app.example.test/billing/done',
    cancelUrl: 'https://app.example.test/billing/cancel',
  };
  let organizationId = '';
  let organizationSlug = '';
  let userId = '';
  let caseId = '';

  it('signs up, verifies the email, signs in and manages the profile and tokens', async () => {
    expect(ok(await api.POST('/auth/check-email-availability', { body: { email } })).data).toEqual({
      isAvailable: true,
      type: null,
    });
    const registered = ok(
      await api.POST('/auth/register', {
        body: {
          name: 'Erin End',
          email,
          password,
          acceptTerms: true,
          organizationName: `E2E Firm ${randomBytes(4).toString('hex')}`,
        },
      }),
    ).data;
    session = { accessToken: registered.accessToken };
    organizationId = registered.organizationInfo!.organization.id;
    userId = registered.userProfile.id;
    const header = { organization: organizationId };
    expect(
      ok(
        await api.POST('/organization/validate-name', {
          params: { header },
          body: { name: `Free Name ${randomUUID()}` },
        }),
      ).data.isValid,
    ).toBe(true);

    ok(await api.POST('/user/resend-verification-email'));
    ok(
      await api.POST('/user/verify-email', {
        body: { token: tokenFromEmail(email, 'Verify your email address'), email },
      }),
    );
    const signedIn = ok(await api.POST('/auth/login', { body: { email, password } })).data;
    expect(signedIn.userProfile.isEmailVerified).toBe(true);
    session = { accessToken: signedIn.accessToken };
    ok(await api.POST('/auth/refresh', { body: { refreshToken: signedIn.refreshToken } }));

    expect(ok(await api.GET('/user/profile')).data.id).toBe(userId);
    ok(
      await api.PATCH('/user/profile', {
        body: {
          name: 'Erin E. End',
          phoneNumbers: ['+1 555 0100'],
          userType: 'attorney',
          onboardingStatus: 'in_progress',
          onboardingStep: 2,
        },
      }),
    );

    const minted = ok(
      await api.POST('/auth/generate-token', { body: { scopes: ['profile:read'], label: 'desktop' } }),
    ).data;
    expect('id' in minted).toBe(true);
    const tokenId = (minted as { id: string }).id;
    expect(ok(await api.GET('/auth/tokens')).data.map((t) => t.id)).toContain(tokenId);
    ok(
      await api.PATCH('/auth/tokens/{id}/scopes', {
        params: { path: { id: tokenId } },
        body: { scopes: ['profile:read', 'cases:read'] },
      }),
    );
    const revoked = await api.DELETE('/auth/tokens/{id}', { params: { path: { id: tokenId } } });
    expect(revoked.response.status).toBe(204);
    expect('validTill' in ok(await api.POST('/auth/generate-token', { body: {} })).data).toBe(true);
  });

  it('runs an organization: details, members, invitations accepted, rejected, resent and deleted', async () => {
    const header = { organization: organizationId };
    const orgId = organizationId;
    const created = ok(
      await api.POST('/organization', { body: { name: `Second Firm ${randomBytes(4).toString('hex')}` } }),
    ).data;
    expect(created.permission.role).toBe('owner');
    const details = ok(await api.GET('/organization/{orgId}', { params: { path: { orgId } } })).data;
    organizationSlug = details.organization.slug;
    ok(
      await api.PATCH('/organization/{orgId}', {
        params: { path: { orgId } },
        body: { description: 'Litigation boutique', city: 'Lisbon' },
      }),
    );
    ok(await api.GET('/organization/slug/{slug}', { params: { path: { slug: details.organization.slug } } }));
    ok(
      await api.GET('/organization/{orgId}/usages-stat', {
        params: { path: { orgId }, query: { deviceId: 'laptop-1', deviceType: 'email' } },
      }),
    );
    ok(await api.GET('/organization/{orgId}/storage-stats', { params: { path: { orgId } } }));
    expect(ok(await api.GET('/organization/user/organizations')).data.total).toBe(2);
    ok(
      await api.GET('/organization/{orgId}/members', {
        params: { path: { orgId }, header, query: { page: 1, perPage: 10, sortOrder: 'desc' } },
      }),
    );

    const invitee = uniqueEmail('e2e-invitee');
    const declines = uniqueEmail('e2e-declines');
    const dropped = uniqueEmail('e2e-dropped');
    ok(
      await api.POST('/organization/{orgId}/invite', {
        params: { path: { orgId } },
        body: { emails: [invitee, declines, dropped], role: 'member' },
      }),
    );
    const list = ok(
      await api.GET('/organization/invitations', { params: { header, query: { status: 'pending', sortBy: 'email' } } }),
    ).data;
    const byEmail = new Map((list.data ?? []).map((i) => [i.email, i.id]));
    ok(
      await api.POST('/organization/{orgId}/invitation/{invitationId}/resend', {
        params: { path: { orgId, invitationId: byEmail.get(invitee)! } },
      }),
    );

    const accepted = ok(
      await api.POST('/organization/{orgId}/invitation/accept', {
        params: { path: { orgId } },
        body: {
          token: tokenFromEmail(invitee, 'You are invited to join'),
          email: invitee,
          name: 'Ivy Invitee',
          password: 'ivy-password-1',
        },
      }),
    ).data;
    const inviteeId = accepted.login!.userProfile.id;
    const owner = session;
    session = { accessToken: accepted.login!.accessToken };
    ok(await api.GET('/organization/pending-invitations'));
    session = owner;

    const rejected = await api.POST('/organization/{orgId}/invitation/reject', {
      params: { path: { orgId } },
      body: {
        token: tokenFromEmail(declines, 'You are invited to join'),
        email: declines,
        reason: 'Conflict of interest',
      },
    });
    expect(rejected.response.status).toBe(200);
    ok(
      await api.DELETE('/organization/{orgId}/invitation/{invitationId}', {
        params: { path: { orgId, invitationId: byEmail.get(dropped)! } },
      }),
    );

    ok(
      await api.PATCH('/organization/{orgId}/update-user-role', {
        params: { path: { orgId } },
        body: { userIds: [inviteeId], role: 'employee' },
      }),
    );
    ok(
      await api.PATCH('/organization/{orgId}/user', {
        params: { path: { orgId } },
        body: { users: [{ userId: inviteeId, role: 'admin', name: 'Ivy I. Invitee' }] },
      }),
    );

    // Cases (extension): the invitee is granted and loses access.
    const opened = ok(await api.POST('/cases', { params: { header }, body: { name: 'Doe v. Roe' } })).data;
    caseId = opened.id;
    const path = { caseId };
    expect(ok(await api.GET('/cases', { params: { header, query: { includeArchived: 'true' } } })).data.total).toBe(1);
    ok(await api.GET('/cases/{caseId}', { params: { header, path } }));
    ok(await api.PATCH('/cases/{caseId}', { params: { header, path }, body: { name: 'Doe v. Roe (2026)' } }));
    ok(
      await api.PUT('/cases/{caseId}/access/{userId}', {
        params: { header, path: { caseId, userId: inviteeId } },
        body: { access: 'viewer' },
      }),
    );
    ok(
      await api.DELETE('/cases/{caseId}/access/{userId}', { params: { header, path: { caseId, userId: inviteeId } } }),
    );
    ok(await api.DELETE('/organization/{orgId}/user/{userId}', { params: { path: { orgId, userId: inviteeId } } }));
  });

  it('reads and imports case material', async () => {
    const path = { caseId };
    expect(ok(await api.GET('/local-emails/{caseId}/threads', { params: { path } })).data.total).toBe(0);
    ok(await api.GET('/professional-network/{caseId}/profiles', { params: { path } }));
    ok(await api.GET('/chat-platform/{caseId}/profiles', { params: { path } }));
    ok(
      await api.GET('/professional-network/{caseId}/search-messages', {
        params: { path, query: { searchText: 'settlement' } },
      }),
    );
    const thread = await api.GET('/local-emails/{caseId}/threads/{threadId}/emails', {
      params: { path: { caseId, threadId: randomUUID() }, query: { starred: '1' } },
    });
    expect(thread.response.status).toBe(404);
    const tickets = await api.GET('/chat-platform/{caseId}/profile/{chatPlatformId}/support-tickets', {
      params: { path: { caseId, chatPlatformId: randomUUID() } },
    });
    expect(tickets.response.status).toBe(404);
    const imported = ok(
      await api.POST('/extraction/case/import-notes', {
        params: { header: { organization: organizationId }, query: { caseId } },
        body: {
          deviceId: 'phone-1',
          deviceType: 'android',
          systemId: 'sys-1',
          appVersion: '3.2.1',
          osDetails: { platform: 'android', cpus: { count: 8 }, extraInformation: {} },
          notes: [{ id: 1, title: 'Call with client', summary: 'Agreed on the timeline' }],
        },
      }),
    ).data;
    expect(imported.isSuccess).toBe(true);
  });

  it('selects a plan, saves a card, upgrades the case and reports the bill', async () => {
    const header = { organization: organizationId };
    expect(ok(await api.GET('/billing/plans', { params: { header } })).data.length).toBeGreaterThan(0);
    const selected = ok(await api.POST('/billing/plan', { params: { header }, body: { tier: 'tier3', ...urls } })).data;
    expect(selected.paymentRequired).toBe(true);
    const setup = ok(await api.POST('/billing/setup-session', { params: { header }, body: urls })).data;
    const saved = await fetch(`${base}${new URL(setup.url).pathname}/complete`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'cardNumber=4242+4242+4242+4242',
      redirect: 'manual',
    });
    expect(saved.status).toBe(303);
    expect(ok(await api.GET('/billing/plan/current', { params: { header } })).data.plan?.paymentMethod?.last4).toBe(
      '4242',
    );
    expect(
      ok(await api.POST('/cases/{caseId}/pro-upgrade', { params: { header, path: { caseId } } })).data.status,
    ).toBe('processing');
    ok(
      await api.GET('/cases/{caseId}/billing/statement', {
        params: { header, path: { caseId }, query: { limit: 50 } },
      }),
    );
    ok(await api.GET('/billing/reconciliation', { params: { header } }));
    ok(await api.GET('/billing/history', { params: { header, query: { category: 'case_billing' } } }));
    ok(await api.GET('/billing/credits', { params: { header } }));
    expect(ok(await api.POST('/billing/report', { params: { header }, body: { format: 'json' } })).data).toHaveProperty(
      'grandTotalChargedCents',
    );
    expect(ok(await api.POST('/billing/report', { params: { header }, body: { format: 'pdf' } })).data).toHaveProperty(
      'downloadUrl',
    );
    const webhook = await api.POST('/webhooks/stripe', {
      params: { header: { 'Stripe-Signature': 't=1,v1=00' } },
      body: { id: 'evt_1' },
    });
    expect(webhook.response.status).toBe(404);
  });

  it('reads the super-admin report, resets and changes the password, and signs out', async () => {
    await updateUserRow(userId, { isSuperAdmin: true });
    ok(await api.GET('/admin/report/org-report', { params: { query: { perPage: 5 } } }));
    ok(await api.POST('/auth/send-forgot-password-link', { body: { email } }));
    const reset = ok(
      await api.POST('/auth/reset-password', {
        body: { token: tokenFromEmail(email, 'Reset your password'), email, password: 'a-brand-new-password' },
      }),
    ).data;
    expect(reset.isSuccess).toBe(true);
    session = {
      accessToken: ok(await api.POST('/auth/login', { body: { email, password: 'a-brand-new-password' } })).data
        .accessToken,
    };
    ok(
      await api.POST('/user/change-password', { body: { oldPassword: 'a-brand-new-password', newPassword: password } }),
    );
    ok(await api.DELETE('/cases/{caseId}', { params: { header: { organization: organizationId }, path: { caseId } } }));
    ok(await api.POST('/auth/logout'));
    expect((await api.GET('/user/profile')).response.status).toBe(401);
  });

  it('reaches every route of the table over HTTP, and every answer matched the document', async () => {
    // Routes the flow above does not call (a route added later, say) get one request built from the document.
    session = { accessToken: ok(await api.POST('/auth/login', { body: { email, password } })).data.accessToken };
    for (const route of routeList.filter((r) => !checker.seen.has(r.operationId))) {
      const request = validRequest(document, definitions.get(route.operationId)!, { organizationId, organizationSlug });
      const pathname = route.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_m, name: string) =>
        encodeURIComponent(request.path![name]!),
      );
      const search = new URLSearchParams();
      for (const [key, value] of Object.entries(request.query ?? {}))
        for (const item of [value].flat()) search.append(key, item);
      const headers: Record<string, string> = { ...request.headers, authorization: `Bearer ${session.accessToken}` };
      if (request.organization) headers.organization = request.organization;
      if (request.body !== undefined) headers['content-type'] = 'application/json';
      await checkedFetch(
        new Request(`${base}${pathname}${search.size ? `?${search}` : ''}`, {
          method: route.method,
          headers,
          ...(request.body !== undefined ? { body: JSON.stringify(request.body) } : {}),
        }),
      );
    }
    expect(problems).toEqual([]);
    expect(routeList.filter((r) => !checker.seen.has(r.operationId)).map((r) => r.operationId)).toEqual([]);
    const notSucceeded = routeList.filter((r) => !successes.has(r.operationId)).map((r) => r.operationId);
    console.info(
      `end to end: ${successes.size} of ${routeList.length} routes answered 2xx over HTTP; not: ${notSucceeded.join(', ') || 'none'}`,
    );
  });
});
