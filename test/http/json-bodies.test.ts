import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { loadHandler } from '../../infra/local/router';
import type { RouteDefinition } from '../../lib/http/route';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke, type InvokeResult } from '../harness/invoke';

/**
 * Issue 13: a JSON body is read as JSON whatever content type it comes with (clients send it as
 * text/plain or with none); `null` is no body where a route reads one.
 */

/** Sends `body` as is, with exactly the headers given (invoke() would add a JSON content type). */
async function send(route: RouteDefinition, body: string, headers: Record<string, string> = {}): Promise<InvokeResult> {
  const event = buildApiGatewayEvent(
    route,
    { method: route.method, url: route.path, headers: { 'user-agent': 'vitest', ...headers }, body },
    {},
  );
  const result = await (await loadHandler(route))(event, buildLambdaContext(route));
  return { status: result.statusCode ?? 200, headers: {}, body: result.body ? JSON.parse(result.body) : undefined };
}

describe('JSON request bodies', () => {
  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['text/plain with a charset', { 'content-type': 'text/plain;charset=UTF-8' }],
    ['no content type', {}],
    ['a form content type', { 'content-type': 'application/x-www-form-urlencoded' }],
  ])('signs in with a JSON body sent as %s', async (_label, headers) => {
    const user = await createUser();
    const data = expectData(
      await send(routes.login, JSON.stringify({ email: user.email, password: user.password }), headers),
    );
    expect(data.userProfile.id).toBe(user.id);
  });

  it.each([
    ['application/json', { 'content-type': 'application/json' }],
    ['text/plain', { 'content-type': 'text/plain' }],
    ['no content type', {}],
  ])('answers 400 VALIDATION_FAILED naming body for a null body sent as %s', async (_label, headers) => {
    expectError(await send(routes.login, 'null', headers), 400, 'VALIDATION_FAILED', ['body']);
  });

  it('still answers 400 MALFORMED_JSON for a JSON content type whose body does not parse', async () => {
    expectError(await send(routes.login, '{"email":', { 'content-type': 'application/json' }), 400, 'MALFORMED_JSON');
  });

  it('answers 400 VALIDATION_FAILED naming body for a text/plain body that is not JSON', async () => {
    expectError(
      await send(routes.login, 'email=a@example.com&password=x', { 'content-type': 'text/plain' }),
      400,
      'VALIDATION_FAILED',
      ['body'],
    );
  });

  it.each([
    ['application/json', { 'content-type': 'application/json' }],
    ['text/plain', { 'content-type': 'text/plain' }],
  ])('drops top-level __proto__ and constructor keys like any unknown field (%s)', async (_label, headers) => {
    const user = await createUser();
    const body = JSON.stringify({ email: user.email, password: user.password }).replace(
      /}$/,
      ',"__proto__":{"isSuperAdmin":true,"polluted":1},"constructor":{"prototype":{"polluted":2}}}',
    );
    const data = expectData(await send(routes.login, body, headers));
    expect(data.userProfile.id).toBe(user.id);
    expect(data.userProfile.isSuperAdmin).not.toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('drops __proto__ and constructor keys at any depth, never assigning them', async () => {
    const owner = await createUser();
    const body =
      '{"metadata":{"crm":"x","__proto__":{"polluted":3},"nested":{"constructor":{"prototype":{"polluted":4}},"__proto__":null,"keep":true}},' +
      '"address":{"line1":"1 Main St","__proto__":{"city":"Injected"}},"communicationPreferences":{"constructor":"x","digest":[{"__proto__":{"polluted":5},"on":true}]}}';
    const result = await invoke(routes.updateOrganization, {
      token: owner.accessToken,
      path: { orgId: owner.organizationId },
      rawBody: body,
    });
    const data = expectData(result, 201);
    expect(data.organization.metadata).toEqual({ crm: 'x', nested: { keep: true } });
    expect(Object.getPrototypeOf(data.organization.metadata)).toBe(Object.prototype);
    expect(data.organization.address).toEqual({ line1: '1 Main St' });
    expect(data.organization.communicationPreferences).toEqual({ digest: [{ on: true }] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('ignores a null body on a route that reads no body', async () => {
    const user = await createUser();
    const result = await invoke(routes.resendVerificationEmail, { token: user.accessToken, rawBody: 'null' });
    expect(expectData(result)).toMatchObject({ message: expect.any(String) });
  });
});
