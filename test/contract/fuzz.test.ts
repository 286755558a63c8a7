import fc from 'fast-check';
import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { routeList } from '../../functions/routes';
import type { Json, RouteWithSchemas } from '../../infra/openapi/document';
import type { RouteDefinition } from '../../lib/http/route';
import { db } from '../../lib/db/client';
import { organizations } from '../../lib/db/schema';
import { createUser, type TestUser, updateUserRow } from '../harness/actors';
import { type InvokeOptions, invoke, requestTarget } from '../harness/invoke';
import { MAX_URL_BYTES } from '../../infra/local/lambda-limits';
import type { CheckedResponse, ContractChecker } from './support/contract';
import { ipSequence, loadContract } from './support/setup';
import {
  type FuzzedRequest,
  malformedRequest,
  mutationsFor,
  undescribedBodyFields,
  unknownIdTwin,
} from './support/fuzz';
import { invalidParts, type RequestSubject, validRequest } from './support/requests';

/**
 * Property-based bad-input fuzzing (fast-check) of every route of the route table, through the
 * real handlers: at least 10,000 generated requests in all, each made from a valid request by one
 * to three mutations. Every answer is checked against the document, and never a 5xx:
 * - a broken bearer token is 401, and input the route's schemas refuse is 400;
 * - input the schemas accept (the tolerant reader: an unknown body field, `__proto__` and
 *   `constructor` keys at any depth, a short malformed id, JSON sent as text/plain) is answered as such: no error names an undescribed body field, and a
 *   malformed id gets the same status and code as an unknown one (the request with fresh UUIDs).
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
let tolerated = 0;
let twins = 0;
let runsPerRoute = 0;
const statuses = new Map<number, number>();

const uniqueIp = ipSequence('198.19');

beforeAll(async () => {
  ({ document, checker, definitions } = await loadContract());
  // Spread the total over the routes that take anything that can be malformed (all of them, today).
  const fuzzable = [...definitions.values()].filter(
    (definition) => mutationsFor(document, definition).length > 0,
  ).length;
  runsPerRoute = Math.ceil(TOTAL / fuzzable) + 2;
  owner = await createUser();
  // Super admin too, so the super-admin routes get as far as input validation as well.
  await updateUserRow(owner.id, { isSuperAdmin: true });
  const [row] = await db()
    .select({ slug: organizations.slug })
    .from(organizations)
    .where(eq(organizations.id, owner.organizationId));
  subject = { organizationId: owner.organizationId, organizationSlug: row!.slug };
});

interface Sent extends CheckedResponse {
  code: string | undefined;
  details: Array<{ path: string }>;
}

async function send(route: RouteDefinition, request: InvokeOptions): Promise<Sent> {
  const result = await invoke(route, { ...request, ip: uniqueIp() });
  statuses.set(result.status, (statuses.get(result.status) ?? 0) + 1);
  const text = result.body === undefined ? '' : JSON.stringify(result.body);
  return {
    status: result.status,
    headers: result.headers,
    text,
    code: result.body?.error?.code,
    details: result.body?.error?.details ?? [],
  };
}

/** A request the schemas accept: no error names a body field the description does not show, and a malformed id answers as an unknown one. */
async function expectTolerated(
  route: RouteDefinition,
  fuzzed: FuzzedRequest,
  result: Sent,
  what: string,
): Promise<void> {
  const definition = definitions.get(route.operationId)!;
  tolerated += 1;
  // A body sent as JSON is JSON, whatever keys it holds (`__proto__`, `constructor`): never MALFORMED_JSON.
  if (fuzzed.request.body !== undefined && fuzzed.request.rawBody === undefined && result.code === 'MALFORMED_JSON')
    throw new Error(`a JSON body must never be refused as malformed: ${what}`);
  for (const field of undescribedBodyFields(document, definition, fuzzed.request)) {
    const named = result.details.filter((d) => d.path === `body.${field}` || d.path.startsWith(`body.${field}.`));
    if (named.length > 0) throw new Error(`an unknown body field must be ignored, not refused: ${what}`);
  }
  const twin = unknownIdTwin(document, definition, fuzzed);
  if (!twin || result.status === 429) return;
  const unknown = await send(route, twin);
  twins += 1;
  const problems = checker.check(route.operationId, unknown);
  if (unknown.status >= 500 || problems.length > 0)
    throw new Error(`the unknown-id twin answered ${unknown.status}: ${problems.join('\n')} (${what})`);
  if (unknown.status === 429) return;
  if (unknown.status !== result.status || unknown.code !== result.code) {
    throw new Error(
      `a malformed id must be answered as an unknown one (${unknown.status} ${unknown.code ?? ''}): ${what}`,
    );
  }
}

describe('bad-input fuzzing', () => {
  it.each(routeList.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s answers every mangled request as the document and the tolerant reader say',
    async (_label, route) => {
      const definition = definitions.get(route.operationId)!;
      if (mutationsFor(document, definition).length === 0) return;
      // The caller is a signed-in owner of the organization (and super admin), so what fails is the input, not the caller.
      const valid = () => ({ ...validRequest(document, definition, subject), token: owner.accessToken });
      await fc.assert(
        fc.asyncProperty(malformedRequest(document, definition, valid), async (fuzzed) => {
          const { kinds, request } = fuzzed;
          const brokenAuth = kinds.includes('authorization') && route.auth === 'bearer';
          const invalid = invalidParts(definition, request);
          const result = await send(route, request);
          sent += 1;
          const what = `${route.operationId} (${kinds.join(', ')}; invalid: ${invalid.join(', ') || 'none'}) answered ${result.status}: ${result.text.slice(0, 300)}`;
          if (result.status >= 500) throw new Error(`a 5xx: ${what}`);
          const problems = checker.check(route.operationId, result);
          if (problems.length > 0) throw new Error(problems.join('\n'));
          // A target over the URL limit is refused before anything reads the request, as the edge and the local server do.
          if (Buffer.byteLength(requestTarget(route, request)) > MAX_URL_BYTES) {
            if (result.status !== 414 || result.code !== 'URI_TOO_LONG')
              throw new Error(`a request target over ${MAX_URL_BYTES} bytes must be 414: ${what}`);
            return;
          }
          if (brokenAuth) {
            if (result.status !== 401) throw new Error(`a broken bearer token must be 401: ${what}`);
          } else if (invalid.length > 0) {
            if (result.status !== 400) throw new Error(`invalid input must be 400: ${what}`);
          } else if (route.rawBody) {
            // No schema reads a raw body; the handler checks it (the webhook's signature) and refuses.
            if (result.status < 400) throw new Error(`a mangled raw body must be refused: ${what}`);
          } else {
            await expectTolerated(route, fuzzed, result, what);
          }
        }),
        { numRuns: runsPerRoute, ...seed },
      );
    },
  );

  it(`sent at least ${TOTAL} mangled requests, none answered 5xx`, () => {
    expect(sent).toBeGreaterThanOrEqual(TOTAL);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
    // The tolerant reader was exercised: accepted requests, and malformed ids compared with unknown ones.
    expect(tolerated).toBeGreaterThan(500);
    expect(twins).toBeGreaterThan(200);
    console.info(
      `fuzz: ${sent} requests (${tolerated} accepted by the schemas) and ${twins} unknown-id twins; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
  });
});
