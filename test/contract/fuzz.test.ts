import fc from 'fast-check';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import type { Json, RouteWithSchemas } from '../../infra/openapi/document';
import { db } from '../../lib/db/client';
import { organizations } from '../../lib/db/schema';
import { createUser, type TestUser, updateUserRow } from '../harness/actors';
import { invoke } from '../harness/invoke';
import type { ContractChecker } from './support/contract';
import { ipSequence, loadContract } from './support/setup';
import { malformedRequest, mutationsFor } from './support/fuzz';
import { invalidParts, type RequestSubject, validRequest } from './support/requests';

/**
 * Property-based bad-input fuzzing (fast-check) of every route of the route table, through the
 * real handlers: at least 10,000 generated malformed requests in all. Every answer must be a 4xx
 * that the document declares for the operation, in the error envelope; never a 5xx, never a 2xx.
 * A failure prints fast-check's seed and the shrunk request; FUZZ_SEED=<seed> replays a run.
 */

const TOTAL = 10_000;
const seed = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {};

let document: Json;
let checker: ContractChecker;
let definitions: Map<string, RouteWithSchemas>;
let owner: TestUser;
let subject: RequestSubject;
let sent = 0;
let runsPerRoute = 0;
const statuses = new Map<number, number>();

const uniqueIp = ipSequence('198.19');

beforeAll(async () => {
  ({ document, checker, definitions } = await loadContract());
  // Spread the total over the routes that take anything that can be malformed (all of them, today).
  const fuzzable = [...definitions.values()].filter((definition) => mutationsFor(document, definition).length > 0).length;
  runsPerRoute = Math.ceil(TOTAL / fuzzable) + 2;
  owner = await createUser();
  // Super admin too, so the super-admin routes get as far as input validation as well.
  await updateUserRow(owner.id, { isSuperAdmin: true });
  const [row] = await db().select({ slug: organizations.slug }).from(organizations).where(eq(organizations.id, owner.organizationId));
  subject = { organizationId: owner.organizationId, organizationSlug: row!.slug };
});

describe('bad-input fuzzing', () => {
  it.each(routeList.map((route) => [`${route.method} ${route.path}`, route] as const))('%s answers malformed requests with a 4xx error envelope', async (_label, route) => {
    const definition = definitions.get(route.operationId)!;
    if (mutationsFor(document, definition).length === 0) return;
    // The caller is a signed-in owner of the organization (and super admin), so what fails is the input, not the caller.
    const valid = () => ({ ...validRequest(document, definition, subject), token: owner.accessToken });
    await fc.assert(
      fc.asyncProperty(malformedRequest(document, definition, valid), async ({ kinds, request }) => {
        const brokenAuth = kinds.includes('authorization');
        const invalid = invalidParts(definition, request);
        // A mutation that happens to leave the request acceptable (a long but allowed text) proves nothing here.
        fc.pre(brokenAuth || invalid.length > 0 || Boolean(route.rawBody));

        const result = await invoke(route, { ...request, ip: uniqueIp() });
        sent += 1;
        statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);

        const text = result.body === undefined ? '' : JSON.stringify(result.body);
        const what = `${route.operationId} (${kinds.join(', ')}; invalid: ${invalid.join(', ') || 'none'}) answered ${result.status}: ${text.slice(0, 300)}`;
        if (result.status < 400 || result.status >= 500) throw new Error(`not a 4xx: ${what}`);
        if (brokenAuth && route.auth === 'bearer' && result.status !== 401) throw new Error(`a broken bearer token must be 401: ${what}`);
        if (!brokenAuth && invalid.length > 0 && result.status !== 400) throw new Error(`invalid input must be 400: ${what}`);
        const problems = checker.check(route.operationId, { status: result.status, headers: result.headers, text });
        if (problems.length > 0) throw new Error(problems.join('\n'));
      }),
      { numRuns: runsPerRoute, ...seed },
    );
  });

  it(`sent at least ${TOTAL} malformed requests, none answered 5xx`, () => {
    expect(sent).toBeGreaterThanOrEqual(TOTAL);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    console.info(`fuzz: ${sent} requests; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  });
});
