import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeList, routes } from '../../functions/routes';
import type { Json, RouteWithSchemas } from '../../infra/openapi/document';
import { type Scope, SCOPES } from '../../lib/auth/scopes';
import { db } from '../../lib/db/client';
import { organizationPlans, organizations } from '../../lib/db/schema';
import type { RouteDefinition } from '../../lib/http/route';
import { type OrganizationRole, ROLES_BY_RANK } from '../../lib/organizations/roles';
import { addMember, createUser, type TestUser, updateUserRow } from '../harness/actors';
import { expectData, invoke, type InvokeOptions, type InvokeResult } from '../harness/invoke';
import {
  CALLERS,
  type Caller,
  callerName,
  type Expected,
  expectedFor,
  meets,
  tokenScopes,
} from '../harness/authorization';
import type { ContractChecker } from './support/contract';
import { ipSequence, loadContract } from './support/setup';
import { invalidParts, type RequestSubject, validRequest } from './support/requests';
import { freshSession } from '../harness/tokens';

/**
 * One table, generated from the route table: every route against every kind of caller, each
 * answer compared with the status computed from the route entry (auth, scope, super admin, role
 * rule, active plan) and checked against the OpenAPI document. Requests are valid (built from the
 * document), so they get past input validation to the organization checks behind it.
 */

let document: Json;
let checker: ContractChecker;
let definitions: Map<string, RouteWithSchemas>;

let owner: TestUser;
const members = new Map<OrganizationRole, TestUser>();
let otherOwner: TestUser;
let superAdmin: TestUser;
let inactiveOwner: TestUser;
let subject: RequestSubject;
let inactiveSubject: RequestSubject;
let revokedToken: string;
let loggedOutToken: string;
const automationTokens = new Map<string, string>();

interface Row {
  caller: string;
  expected: string;
  status: number;
  code: string;
  problem: string;
}
const matrix = new Map<string, Row[]>();

const uniqueIp = ipSequence('198.18');

async function slugOf(organizationId: string): Promise<string> {
  const [row] = await db()
    .select({ slug: organizations.slug })
    .from(organizations)
    .where(eq(organizations.id, organizationId));
  return row!.slug;
}

async function automationToken(scopes: Scope[]): Promise<string> {
  const key = [...scopes].sort().join(' ');
  let token = automationTokens.get(key);
  if (!token) {
    token = expectData<{ token: string }>(
      await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes } }),
    ).token;
    automationTokens.set(key, token);
  }
  return token;
}

// A fresh sign-in session per route (freshSession), so a route that ends sessions (logout) cannot spoil the next.

async function credentialsFor(
  caller: Caller,
  route: RouteDefinition,
): Promise<Pick<InvokeOptions, 'token' | 'headers'>> {
  const scopes = tokenScopes(route, SCOPES);
  switch (caller.kind) {
    case 'anonymous':
      return {};
    case 'malformed-token':
      return { headers: { authorization: 'Bearer not-a-token.at-all' } };
    case 'revoked-token':
      return { token: revokedToken };
    case 'logged-out-token':
      return { token: loggedOutToken };
    case 'token-without-scope':
      return { token: await automationToken(scopes.withoutScope) };
    case 'token-with-scope':
      return { token: await automationToken(scopes.withScope) };
    case 'other-organization':
      return { token: await freshSession(otherOwner) };
    case 'super-admin':
      return { token: await freshSession(superAdmin) };
    case 'inactive-plan-owner':
      return { token: await freshSession(inactiveOwner) };
    case 'role':
      return { token: await freshSession(members.get(caller.role)!) };
  }
}

const describeExpected = (expected: Expected) =>
  expected.outcome === 'refused' ? `${expected.status} ${expected.code}` : expected.outcome;

beforeAll(async () => {
  ({ document, checker, definitions } = await loadContract());

  owner = await createUser();
  members.set('owner', owner);
  for (const role of ROLES_BY_RANK.filter((r) => r !== 'owner'))
    members.set(role, await addMember(owner.organizationId, role));
  otherOwner = await createUser();
  superAdmin = await createUser();
  await updateUserRow(superAdmin.id, { isSuperAdmin: true });
  inactiveOwner = await createUser();
  await db()
    .update(organizationPlans)
    .set({ isActive: false })
    .where(eq(organizationPlans.organizationId, inactiveOwner.organizationId));
  subject = { organizationId: owner.organizationId, organizationSlug: await slugOf(owner.organizationId) };
  inactiveSubject = {
    organizationId: inactiveOwner.organizationId,
    organizationSlug: await slugOf(inactiveOwner.organizationId),
  };

  const revoked = expectData<{ token: string; id: string }>(
    await invoke(routes.generateToken, { token: owner.accessToken, body: { scopes: [...SCOPES] } }),
  );
  expect((await invoke(routes.revokeToken, { token: owner.accessToken, path: { id: revoked.id } })).status).toBe(204);
  revokedToken = revoked.token;
  loggedOutToken = await freshSession(owner);
  expectData(await invoke(routes.logout, { token: loggedOutToken }));
});

afterAll(() => {
  // The whole table, for people: test/contract/artifacts/authorization-matrix.md (not committed).
  const callers = CALLERS.map(callerName);
  const lines = [
    `| route | ${callers.join(' | ')} |`,
    `|---|${callers.map(() => '---').join('|')}|`,
    ...[...matrix].map(
      ([operationId, rows]) =>
        `| ${operationId} | ${rows.map((r) => `${r.status}${r.code ? ` ${r.code}` : ''}${r.problem ? ' ✗' : ''}`).join(' | ')} |`,
    ),
  ];
  const directory = join(import.meta.dirname, 'artifacts');
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'authorization-matrix.md'), `${lines.join('\n')}\n`);
});

const asChecked = (result: InvokeResult) => ({
  status: result.status,
  headers: result.headers,
  text: result.body === undefined ? '' : JSON.stringify(result.body),
});

describe('authorization matrix', () => {
  it.each(routeList.map((route) => [`${route.method} ${route.path}`, route] as const))('%s', async (_label, route) => {
    // Prepare
    const definition = definitions.get(route.operationId)!;
    const rows: Row[] = [];
    for (const caller of CALLERS) {
      const target = caller.kind === 'inactive-plan-owner' ? inactiveSubject : subject;
      const request = validRequest(document, definition, target);
      expect(
        invalidParts(definition, request),
        `${route.operationId}: the request built from the document is refused by its schemas`,
      ).toEqual([]);
      // Without authentication there is nothing to reach behind validation: send no body, so nothing is created.
      if (route.auth === 'none') delete request.body;
      const credentials = await credentialsFor(caller, route);
      // Act
      const result = await invoke(route, {
        ...request,
        ...credentials,
        headers: { ...request.headers, ...credentials.headers },
        ip: uniqueIp(),
      });
      // Assess
      const expected = expectedFor(route, caller);
      const code = (result.body?.error?.code as string | undefined) ?? '';
      const problems = [
        meets(route, expected, { status: result.status, code }),
        ...checker.check(route.operationId, asChecked(result)),
      ].filter(Boolean);
      rows.push({
        caller: callerName(caller),
        expected: describeExpected(expected),
        status: result.status,
        code,
        problem: problems.join('; '),
      });
    }
    if (route.auth === 'none') {
      const answers = new Set(rows.map((r) => `${r.status} ${r.code}`));
      if (answers.size > 1)
        for (const r of rows) r.problem ||= `the answer depends on the token: ${[...answers].join(', ')}`;
    }
    matrix.set(route.operationId, rows);
    const failures = rows.filter((r) => r.problem);
    expect(failures, failures.map((r) => `${r.caller}: got ${r.status} ${r.code}, ${r.problem}`).join('\n')).toEqual(
      [],
    );
  });

  it('has a row for every route of the route table and a column for every caller', () => {
    expect([...matrix.keys()].sort()).toEqual(routeList.map((r) => r.operationId).sort());
    for (const rows of matrix.values()) expect(rows.map((r) => r.caller)).toEqual(CALLERS.map(callerName));
  });
});
