import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import type { Json, RouteWithSchemas } from '../../infra/openapi/document';
import { openLoginSession } from '../../lib/auth/sessions';
import { db } from '../../lib/db/client';
import type { CaseAccess } from '../../lib/cases/rules';
import type { RouteDefinition } from '../../lib/http/route';
import type { OrganizationRole } from '../../lib/organizations/roles';
import { grantCase } from '../harness/cases';
import { putOnPlan } from '../harness/billing';
import { addMember, createCaseRow, createUser, type TestUser } from '../harness/actors';
import { invoke, type InvokeResult } from '../harness/invoke';
import type { ContractChecker } from './support/contract';
import { ipSequence, loadContract } from './support/setup';
import { invalidParts, operationsById, type RequestSubject, validRequest } from './support/requests';

/**
 * The case dimension of the authorization matrix: every route of the route table that acts on one
 * case (its `case` rule), against callers holding each kind of access to the case, through the real
 * handlers. Each row gets a fresh case, so a route that changes the case (delete, Pro upgrade)
 * cannot spoil the next row. Refusals are 403 in the error envelope, never data.
 */

/** A caller of a case route. Everyone but `other-organization` is a member of the case's organization. */
interface CaseCaller {
  name: string;
  /** Role in the case's organization; null: not a member. */
  role: OrganizationRole | null;
  /** Access to the row's case; null: none. */
  access: CaseAccess | null;
  /** Sends the id of another organization of theirs in the `organization` header. */
  otherHeader?: true;
}

const CASE_CALLERS: readonly CaseCaller[] = [
  { name: 'case-owner', role: 'member', access: 'owner' },
  { name: 'case-admin', role: 'member', access: 'admin' },
  { name: 'case-viewer', role: 'member', access: 'viewer' },
  { name: 'opposing-counsel', role: 'member', access: 'opposing_counsel' },
  { name: 'no-case-access', role: 'member', access: null },
  { name: 'org-admin-case-viewer', role: 'admin', access: 'viewer' },
  { name: 'org-owner-no-case-access', role: 'owner', access: null },
  { name: 'case-owner-other-header', role: 'member', access: 'owner', otherHeader: true },
  { name: 'other-organization', role: null, access: null },
];

/**
 * What the route's case rule allows, written out here rather than taken from lib/cases/rules.ts:
 * the caller must be a member with some access; then a listed access level, or a listed role.
 * With another organization in the header, routes that read the header refuse (contract: "case in
 * another organization than the header").
 */
function allowed(route: RouteDefinition, caller: CaseCaller): boolean {
  const rule = route.case!;
  if (caller.otherHeader && route.organization?.from === 'header') return false;
  if (!caller.role || !caller.access) return false;
  return rule.access.includes(caller.access) || (rule.orRoles ?? []).includes(caller.role);
}

let document: Json;
let checker: ContractChecker;
let definitions: Map<string, RouteWithSchemas>;
let owner: TestUser;
let subject: RequestSubject;
const users = new Map<string, TestUser>();
const caseRoutes = routeList.filter((route) => route.case);
const matrix = new Map<string, string[]>();

const uniqueIp = ipSequence('198.20');

/** The required case id parameters of an operation in the document (an optional one, as on the billing history, only filters). */
function caseIdParameters(operationId: string): string[] {
  const parameters = (operationsById(document).get(operationId)?.operation.parameters ?? []) as Json[];
  return parameters.filter((p) => p.name === 'caseId' && p.required).map((p) => p.in as string);
}

beforeAll(async () => {
  ({ document, checker, definitions } = await loadContract());
  owner = await createUser();
  subject = { organizationId: owner.organizationId, organizationSlug: '' };
  // Case billing needs a self-serve plan (403 FEATURE_DISABLED before one is selected).
  await putOnPlan(owner, 'tier1');
  for (const caller of CASE_CALLERS) {
    // Every test user owns an organization of their own (createUser): the "other header" one.
    users.set(caller.name, caller.role ? await addMember(owner.organizationId, caller.role) : await createUser());
  }
});

afterAll(() => {
  const lines = [
    `| route | rule | ${CASE_CALLERS.map((c) => c.name).join(' | ')} |`,
    `|---|---|${CASE_CALLERS.map(() => '---').join('|')}|`,
    ...[...matrix].map(
      ([operationId, cells]) =>
        `| ${operationId} | ${caseRoutes.find((r) => r.operationId === operationId)!.case!.name} | ${cells.join(' | ')} |`,
    ),
  ];
  const directory = join(import.meta.dirname, 'artifacts');
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'case-access-matrix.md'), `${lines.join('\n')}\n`);
});

async function send(route: RouteDefinition, caller: CaseCaller): Promise<InvokeResult> {
  const user = users.get(caller.name)!;
  const row = await createCaseRow(owner.organizationId);
  // The organization's first owner created the case and owns it, as POST /cases does.
  await grantCase(row.id, owner.id, 'owner');
  if (caller.access) await grantCase(row.id, user.id, caller.access);
  const target = caller.otherHeader ? { ...subject, organizationId: user.organizationId } : subject;
  const request = validRequest(document, definitions.get(route.operationId)!, target);
  expect(
    invalidParts(definitions.get(route.operationId)!, request),
    `${route.operationId}: the request built from the document is refused by its schemas`,
  ).toEqual([]);
  if (request.path && 'caseId' in request.path) request.path.caseId = row.id;
  if (request.query && 'caseId' in request.query) request.query.caseId = row.id;
  const token = (await openLoginSession(db(), user.id, null)).tokens.accessToken;
  return invoke(route, { ...request, token, ip: uniqueIp() });
}

describe('case access matrix', () => {
  it('covers exactly the routes that take a case id', () => {
    const takingCase = routeList
      .filter((route) => caseIdParameters(route.operationId).length > 0)
      .map((r) => r.operationId);
    expect(caseRoutes.map((r) => r.operationId).sort()).toEqual(takingCase.sort());
    expect(caseRoutes.length).toBeGreaterThan(10);
  });

  it.each(caseRoutes.map((route) => [`${route.method} ${route.path} (${route.case!.name})`, route] as const))(
    '%s',
    async (_label, route) => {
      const cells: string[] = [];
      const failures: string[] = [];
      for (const caller of CASE_CALLERS) {
        // Act
        const result = await send(route, caller);
        // Assess
        const expectAllowed = allowed(route, caller);
        const code = (result.body?.error?.code as string | undefined) ?? '';
        cells.push(`${result.status}${code ? ` ${code}` : ''}`);
        const text = result.body === undefined ? '' : JSON.stringify(result.body);
        const problems = checker.check(route.operationId, { status: result.status, headers: result.headers, text });
        if (expectAllowed && (result.status === 401 || result.status === 403))
          problems.push('expected to be let through');
        if (!expectAllowed && result.status !== 403) problems.push('expected 403');
        if (!expectAllowed && result.body && 'data' in result.body) problems.push('a refusal carries data');
        if (problems.length) failures.push(`${caller.name}: got ${result.status} ${code}: ${problems.join('; ')}`);
      }
      matrix.set(route.operationId, cells);
      expect(failures).toEqual([]);
    },
  );
});
