import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { PlanBelowUsageError } from '../../lib/billing/errors';
import { type DomainError, InvalidInputError, RateLimitedError } from '../../lib/errors';
import { endpoint } from '../../lib/http/endpoint';
import type { RouteDefinition } from '../../lib/http/route';
import type { ApiContext } from '../../lib/http/types';
import { InvitationNotPendingError } from '../../lib/organizations/invitations/errors';
import { NotAMemberError, OrganizationNameTakenError, UnknownOrganizationError } from '../../lib/organizations/errors';

/**
 * What domain code throws (lib/errors.ts and each lib/<domain>/errors.ts) becomes the error
 * envelope in lib/http alone: the status from the code, the message as written, and input fields
 * named by where the request carried them.
 */

const route: RouteDefinition = {
  operationId: 'probe',
  method: 'POST',
  path: '/probe',
  handler: 'functions/probe.ts',
  summary: 'probe',
  auth: 'none',
  scope: null,
  internal: false,
  successStatus: 200,
  throttle: { rate: 1, burst: 1 },
};

const schemas = {
  body: z.object({ x: z.optional(z.string()), notes: z.optional(z.array(z.object({ id: z.string() }))) }),
  query: z.object({ y: z.optional(z.string()), unsent: z.optional(z.string()) }),
};

/** A handler that throws `error`, called with body `{ x, notes }` and query `?y=`. */
async function answerTo(error: DomainError) {
  const handler = endpoint(route, schemas, async () => {
    throw error;
  });
  const event = buildApiGatewayEvent(
    route,
    {
      method: 'POST',
      url: '/probe?y=1',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ x: 'a', notes: [{ id: 'n1' }] }),
    },
    {},
  );
  const result = await handler(event, buildLambdaContext(route) as ApiContext);
  return {
    status: result.statusCode,
    headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)])),
    body: JSON.parse(result.body!),
  };
}

describe('domain errors answered by lib/http', () => {
  it.each([
    { error: new OrganizationNameTakenError(), status: 400, code: 'ORGANIZATION_NAME_TAKEN' },
    { error: new InvitationNotPendingError('accepted'), status: 400, code: 'INVITATION_NOT_PENDING' },
    { error: new NotAMemberError(), status: 403, code: 'NOT_A_MEMBER' },
    { error: new UnknownOrganizationError(), status: 404, code: 'NOT_FOUND' },
  ])('answers $error.name as $status $code with its message', async ({ error, status, code }) => {
    // Act
    const result = await answerTo(error);
    // Assess
    expect(result.status).toBe(status);
    expect(result.body).toMatchObject({ statusCode: status, error: { code, message: error.message } });
    expect(result.body.error).not.toHaveProperty('details');
  });

  it('names input fields by the part of the request that carried them', async () => {
    const result = await answerTo(
      new InvalidInputError([
        { field: 'x', message: 'x is wrong' },
        { field: 'y', message: 'y is wrong' },
        { field: 'notes.0.id', message: 'no such note' },
        // Not sent: the schema that declares it says where it belongs.
        { field: 'unsent', message: 'needed here' },
      ]),
    );
    expect(result.status).toBe(400);
    expect(result.body.error).toEqual({
      code: 'VALIDATION_FAILED',
      message: 'Invalid request: body.x, query.y, body.notes.0.id, query.unsent',
      details: [
        { path: 'body.x', message: 'x is wrong' },
        { path: 'query.y', message: 'y is wrong' },
        { path: 'body.notes.0.id', message: 'no such note' },
        { path: 'query.unsent', message: 'needed here' },
      ],
    });
  });

  it('answers findings that are not input fields as they are', async () => {
    const over = [{ path: 'seats', message: '4 seats in use; tier1 allows 2' }];
    const result = await answerTo(new PlanBelowUsageError({ name: 'Solo', key: 'tier1' }, over));
    expect(result.status).toBe(409);
    expect(result.body.error).toEqual({
      code: 'PLAN_BELOW_USAGE',
      message: 'The organization uses more than Solo (tier1) allows: seats',
      details: over,
    });
  });

  it('answers RateLimitedError 429 with Retry-After', async () => {
    const result = await answerTo(new RateLimitedError(42));
    expect(result.status).toBe(429);
    expect(result.headers['retry-after']).toBe('42');
    expect(result.body.error).toEqual({ code: 'RATE_LIMITED', message: 'Too many requests; try again later' });
  });
});
