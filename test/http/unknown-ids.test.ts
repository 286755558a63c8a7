import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeList, routes } from '../../functions/routes';
import type { Json, RouteWithSchemas } from '../../infra/openapi/document';
import { pathParameterNames } from '../../infra/openapi/statuses';
import { db } from '../../lib/db/client';
import { invitations, networkConversations, networkMessages, organizations } from '../../lib/db/schema';
import { insertRows, onTierWithoutCharges } from '../harness/billing';
import { type RequestSubject, validRequest } from '../contract/support/requests';
import { ipSequence, loadContract } from '../contract/support/setup';
import { createCaseRow, createUser, type TestUser, uniqueEmail, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke, type InvokeResult } from '../harness/invoke';
import { caseWithOwner } from '../harness/cases';
import { createProfile, createTag, seedThread } from '../harness/material';

/**
 * The contract types every id (path, `organization` header, id-valued query and body fields) as a
 * plain string: one that is not a UUID names nothing, so it gets the answer of an unknown id (404,
 * or 403 where the contract says so) or filters to nothing, never 400 and never 5xx. Only an id
 * over 200 characters or with text Postgres cannot store is 400 naming the field.
 */

const uniqueIp = ipSequence('198.21');
const as = (user: TestUser, organization = user.organizationId) => ({
  token: user.accessToken,
  organization,
  ip: uniqueIp(),
});
const describeAnswer = (result: InvokeResult) => `${result.status} ${JSON.stringify(result.body).slice(0, 300)}`;

describe('every path id of the route table', () => {
  let document: Json;
  let definitions: Map<string, RouteWithSchemas>;
  let owner: TestUser;
  let subject: RequestSubject;
  let knownCaseId: string;

  beforeAll(async () => {
    ({ document, definitions } = await loadContract());
    owner = await createUser();
    // Super admin too, so the super-admin routes get past their role check.
    await updateUserRow(owner.id, { isSuperAdmin: true });
    const [row] = await db()
      .select({ slug: organizations.slug })
      .from(organizations)
      .where(eq(organizations.id, owner.organizationId));
    subject = { organizationId: owner.organizationId, organizationSlug: row!.slug };
    knownCaseId = (await createCaseRow(owner.organizationId)).id;
  });

  /** The other path ids name real rows where one exists (the owner's case, the owner), so the lookup of the id under test is reached. */
  const knownValues = (): Record<string, string> => ({ caseId: knownCaseId, userId: owner.id });

  const pathIds = routeList.flatMap((route) =>
    pathParameterNames(route.path)
      // The slug is a name, not an id.
      .filter((name) => name !== 'slug')
      .map((name) => [`${route.method} ${route.path} {${name}}`, route, name] as const),
  );

  it.each(pathIds)('%s: "abc" answers like an unknown UUID, never 400 or 5xx', async (_label, route, name) => {
    const definition = definitions.get(route.operationId)!;
    const send = (value: string) => {
      const request = validRequest(document, definition, subject);
      const known = Object.fromEntries(
        Object.keys(request.path ?? {})
          .filter((key) => key in knownValues())
          .map((key) => [key, knownValues()[key]!]),
      );
      return invoke(route, {
        ...request,
        path: { ...request.path, ...known, [name]: value },
        token: owner.accessToken,
        ip: uniqueIp(),
      });
    };
    const malformed = await send('abc');
    const unknown = await send(randomUUID());
    for (const result of [malformed, unknown]) {
      expect(result.status, describeAnswer(result)).toBeLessThan(500);
      expect(result.body?.error?.code, describeAnswer(result)).not.toBe('VALIDATION_FAILED');
    }
    expect(malformed.status, `abc: ${describeAnswer(malformed)}; random UUID: ${describeAnswer(unknown)}`).toBe(
      unknown.status,
    );
  });
});

describe('path ids that are not UUIDs', () => {
  it('DELETE /auth/tokens/abc answers 404 NOT_FOUND', async () => {
    const user = await createUser();
    expectError(await invoke(routes.revokeToken, { token: user.accessToken, path: { id: 'abc' } }), 404, 'NOT_FOUND');
  });

  it('PATCH /auth/tokens/abc/scopes answers 404 NOT_FOUND', async () => {
    const user = await createUser();
    expectError(
      await invoke(routes.updateTokenScopes, {
        token: user.accessToken,
        path: { id: 'abc' },
        body: { scopes: ['profile:read'] },
      }),
      404,
      'NOT_FOUND',
    );
  });

  it('GET /organization/acme answers 403 NOT_A_MEMBER, as for an unknown organization', async () => {
    const user = await createUser();
    const result = await invoke(routes.getOrganization, { token: user.accessToken, path: { orgId: 'acme' } });
    expectError(result, 403, 'NOT_A_MEMBER');
    expect(result.body.data).toBeUndefined();
  });

  it('POST /organization/nope/invitation/accept and /reject answer 404 NOT_FOUND, as for an unknown organization', async () => {
    const body = {
      token: 'cebs_inv_whatever',
      email: uniqueEmail(),
      name: 'Ann Lee',
      password: 'long enough password',
    };
    expectError(
      await invoke(routes.acceptInvitation, { path: { orgId: 'nope' }, body, ip: uniqueIp() }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await invoke(routes.rejectInvitation, {
        path: { orgId: 'nope' },
        body: { token: body.token, email: body.email },
        ip: uniqueIp(),
      }),
      404,
      'NOT_FOUND',
    );
  });

  it('GET /cases/{caseId} finds the case by its id sent in upper case', async () => {
    const { owner, caseId } = await caseWithOwner();
    const data = expectData(await invoke(routes.getCase, { ...as(owner), path: { caseId: caseId.toUpperCase() } }));
    expect(data.id).toBe(caseId);
  });

  it('a thread, chat profile or invitation id that is not a UUID answers 404 NOT_FOUND under a real case or organization', async () => {
    const { owner, caseId } = await caseWithOwner();
    expectError(
      await invoke(routes.listThreadEmails, { token: owner.accessToken, path: { caseId, threadId: 'abc' } }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await invoke(routes.listSupportTickets, { token: owner.accessToken, path: { caseId, chatPlatformId: 'abc' } }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await invoke(routes.deleteInvitation, {
        token: owner.accessToken,
        path: { orgId: owner.organizationId, invitationId: 'abc' },
      }),
      404,
      'NOT_FOUND',
    );
  });

  it.each([
    ['over 200 characters', 'a'.repeat(201)],
    ['with a NUL character', 'ab\u0000c'],
  ])('answers 400 VALIDATION_FAILED naming the field for an id %s', async (_label, id) => {
    const user = await createUser();
    expectError(await invoke(routes.revokeToken, { token: user.accessToken, path: { id } }), 400, 'VALIDATION_FAILED', [
      'path.id',
    ]);
    expectError(
      await invoke(routes.getOrganization, { token: user.accessToken, path: { orgId: id } }),
      400,
      'VALIDATION_FAILED',
      ['path.orgId'],
    );
  });
});

describe('the organization header', () => {
  it('answers 403 NOT_A_MEMBER for "acme", as for an organization the caller is not in', async () => {
    const { owner } = await caseWithOwner();
    expectError(await invoke(routes.listCases, as(owner, 'acme')), 403, 'NOT_A_MEMBER');
    expectError(await invoke(routes.getCurrentPlan, as(owner, 'acme')), 403, 'NOT_A_MEMBER');
  });

  it('accepts the id of an organization of the caller in upper case', async () => {
    const { owner, caseId } = await caseWithOwner();
    const page = expectData(await invoke(routes.listCases, as(owner, owner.organizationId.toUpperCase())));
    expect(page.data.map((c: { id: string }) => c.id)).toEqual([caseId]);
  });

  it('answers 400 naming headers.organization when it is over 200 characters or missing', async () => {
    const user = await createUser();
    expectError(await invoke(routes.listCases, as(user, 'o'.repeat(201))), 400, 'VALIDATION_FAILED', [
      'headers.organization',
    ]);
    expectError(await invoke(routes.listCases, { token: user.accessToken }), 400, 'VALIDATION_FAILED', [
      'headers.organization',
    ]);
  });

  it('GET /organization/invitations answers 403 NOT_A_MEMBER when the header is not one of the caller’s organizations', async () => {
    const user = await createUser();
    const stranger = await createUser();
    expectError(await invoke(routes.listInvitations, as(user, stranger.organizationId)), 403, 'NOT_A_MEMBER');
    expectError(await invoke(routes.listInvitations, as(user, 'acme')), 403, 'NOT_A_MEMBER');
    expectData(await invoke(routes.listInvitations, as(user)));
  });

  it('GET /organization/invitations answers 403 NOT_A_MEMBER for an organization query parameter that is not a UUID', async () => {
    const user = await createUser();
    expectError(
      await invoke(routes.listInvitations, { ...as(user), query: { organization: 'acme' } }),
      403,
      'NOT_A_MEMBER',
    );
  });

  it('POST /organization/validate-name (no sign-in) accepts any header text', async () => {
    expectData(
      await invoke(routes.validateOrganizationName, {
        organization: 'acme',
        body: { name: `Free ${randomUUID()}` },
        ip: uniqueIp(),
      }),
    );
  });
});

describe('id filters in query and body', () => {
  it('caseIds=abc in storage-stats filters every case out', async () => {
    const owner = await createUser();
    await createCaseRow(owner.organizationId, { storageBytes: 42 });
    const all = expectData(
      await invoke(routes.getStorageStats, { ...as(owner), path: { orgId: owner.organizationId } }),
    );
    expect(all.totalStorage).toBe(42);
    const none = expectData(
      await invoke(routes.getStorageStats, {
        ...as(owner),
        path: { orgId: owner.organizationId },
        query: { caseIds: 'abc' },
      }),
    );
    expect(none).toEqual({ totalStorage: 0, cases: [] });
  });

  it('caseIds ["abc"] in the billing report filters every row out', async () => {
    const owner = await createUser();
    await onTierWithoutCharges(owner.organizationId, 'tier3');
    const charged = await createCaseRow(owner.organizationId);
    const at = new Date(Date.now() - 60_000);
    await insertRows(owner.organizationId, [{ caseId: charged.id, amountCents: 1_000, createdAt: at }]);
    const window = {
      format: 'json',
      startDate: new Date(at.getTime() - 60_000).toISOString(),
      endDate: new Date().toISOString(),
    };
    const all = expectData(await invoke(routes.createBillingReport, { ...as(owner), body: window }));
    expect(all.grandTotalChargedCents).toBe(1_000);
    const none = expectData(
      await invoke(routes.createBillingReport, { ...as(owner), body: { ...window, caseIds: ['abc'] } }),
    );
    expect(none.grandTotalChargedCents).toBe(0);
    expect(JSON.stringify(none)).not.toContain(charged.id);
  });

  it('caseId=abc in the billing history filters every entry out', async () => {
    const owner = await createUser();
    const entries = expectData(await invoke(routes.listBillingHistory, { ...as(owner), query: { caseId: 'abc' } }));
    expect(entries).toEqual([]);
  });

  it('tags=abc on thread emails matches no email, and excludeTags=abc excludes none', async () => {
    const { owner, caseId, organizationId } = await caseWithOwner();
    const tag = await createTag(organizationId, caseId, 'Hot');
    const { threadId } = await seedThread(caseId, [{ minute: 0, tagIds: [tag.id] }, { minute: 1 }]);
    const list = (query: Record<string, string>) =>
      invoke(routes.listThreadEmails, { token: owner.accessToken, path: { caseId, threadId }, query });
    expect(expectData(await list({ tags: 'abc' }))).toMatchObject({ total: 0 });
    expect(expectData(await list({ tags: `abc,${tag.id}` })).total).toBe(1);
    expect(expectData(await list({ excludeTags: 'abc' })).total).toBe(2);
  });

  it('tags=abc on search-messages matches no message', async () => {
    const { owner, caseId } = await caseWithOwner();
    const profile = await createProfile(caseId, 'professional_network', 'Ann Lee', true);
    const [conversation] = await db()
      .insert(networkConversations)
      .values({ caseId, profileId: profile.id, externalId: 'c1', title: 'Talk', participants: ['Ann Lee'] })
      .returning();
    await db().insert(networkMessages).values({
      caseId,
      conversationId: conversation!.id,
      profileId: profile.id,
      externalId: 'm1',
      from: 'Ann Lee',
      to: 'Bob Roe',
      date: new Date(),
      subject: null,
      content: 'contract',
    });
    const search = (query: Record<string, string>) =>
      invoke(routes.searchNetworkMessages, {
        token: owner.accessToken,
        path: { caseId },
        query: { searchText: 'contract', ...query },
      });
    expect(expectData(await search({})).total).toBe(1);
    expect(expectData(await search({ tags: 'abc' })).total).toBe(0);
  });

  it('organization=abc on pending invitations matches none', async () => {
    const invitee = await createUser();
    await updateUserRow(invitee.id, { isEmailVerified: true });
    const inviter = await createUser();
    await db()
      .insert(invitations)
      .values({
        organizationId: inviter.organizationId,
        email: invitee.email,
        role: 'member',
        status: 'pending',
        tokenHash: randomUUID(),
        expiresAt: new Date(Date.now() + 86_400_000),
      });
    const list = (query: Record<string, string>) =>
      invoke(routes.listPendingInvitations, { token: invitee.accessToken, query });
    expect(expectData(await list({})).total).toBe(1);
    expect(expectData(await list({ organization: 'abc' })).total).toBe(0);
  });
});
