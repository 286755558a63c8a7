import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeList, routes } from '../../functions/routes';
import * as z from 'zod/mini';
import { loadHandler } from '../../infra/local/router';
import type { RequestSchemas } from '../../lib/http/validate';

const ROOT = join(import.meta.dirname, '../..');

function handlerFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) return handlerFiles(path);
    return name.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

describe('the route table', () => {
  it('lists every handler file under functions/, and every entry has a file that exports a handler', async () => {
    const files = handlerFiles(join(ROOT, 'functions')).filter((f) => f !== 'functions/routes.ts');
    expect(new Set(routeList.map((r) => r.handler))).toEqual(new Set(files));
    for (const route of routeList) expect(typeof (await loadHandler(route))).toBe('function');
  });

  it('has each method and path once, and each operation id once, equal to its key', () => {
    const keys = routeList.map((r) => `${r.method} ${r.path.replace(/\{[^}]+\}/g, '{}')}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const [name, route] of Object.entries(routes)) expect(route.operationId).toBe(name);
  });

  it('gives every route a sane throttle, status and path', () => {
    for (const route of routeList) {
      expect(route.path, route.operationId).toMatch(/^(\/[a-z0-9-]+|\/\{[A-Za-z]+\})+$/);
      expect(route.throttle.rate, route.operationId).toBeGreaterThan(0);
      expect(route.throttle.burst, route.operationId).toBeGreaterThanOrEqual(1);
      expect([200, 201, 202, 204]).toContain(route.successStatus);
      if (route.organization) expect(route.auth, route.operationId).toBe('bearer');
      // A route's own limit: the gateway throttle is no looser. A shared limit spans several routes
      // (register, forgot-password): their throttles protect the service, the limit each client.
      if (route.rateLimit && !route.rateLimit.shared)
        expect(route.throttle.rate * 60, route.operationId).toBeLessThanOrEqual(route.rateLimit.perMinute);
    }
  });

  it('marks the contract limits: 10/min for check-email-availability (shared by the enumeration routes), 3/min for resend-verification-email', () => {
    const enumeration = { perMinute: 10, shared: 'enumeration' };
    expect(routes.checkEmailAvailability.rateLimit).toEqual(enumeration);
    expect(routes.register.rateLimit).toEqual(enumeration);
    expect(routes.sendForgotPasswordLink.rateLimit).toEqual(enumeration);
    const shared = routeList.filter((r) => r.rateLimit?.shared === 'enumeration').map((r) => r.operationId);
    expect(shared.sort()).toEqual(['checkEmailAvailability', 'register', 'sendForgotPasswordLink']);
    expect(routes.resendVerificationEmail.rateLimit).toEqual({ perMinute: 3 });
    expect(routes.resendVerificationEmail.internal).toBe(true);
  });

  it('marks every route that answers a credential or takes a password `credential` (its Idempotency-Key ignored)', async () => {
    /** Property names anywhere in a JSON schema. */
    const names = (schema: unknown): string[] => {
      if (Array.isArray(schema)) return schema.flatMap(names);
      if (!schema || typeof schema !== 'object') return [];
      const own = Object.entries(schema as Record<string, unknown>);
      const properties = (schema as { properties?: Record<string, unknown> }).properties ?? {};
      return [...Object.keys(properties), ...own.flatMap(([, value]) => names(value))];
    };
    const jsonSchema = (schema: z.ZodMiniType | undefined, io: 'input' | 'output') =>
      schema ? z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) : {};
    const marked: string[] = [];
    for (const route of routeList) {
      const handler = (await loadHandler(route)) as unknown as { definition: { schemas: RequestSchemas } };
      const { schemas } = handler.definition;
      const answers = names(jsonSchema(schemas.response as z.ZodMiniType | undefined, 'output'));
      const takes = names(jsonSchema(schemas.body as z.ZodMiniType | undefined, 'input'));
      const secret =
        answers.some((name) => ['accessToken', 'refreshToken', 'token'].includes(name)) ||
        takes.some((name) => /password/i.test(name));
      if (secret) marked.push(route.operationId);
      expect(route.credential === true, route.operationId).toBe(secret);
    }
    expect(marked.sort()).toEqual(
      [
        'acceptInvitation',
        'changePassword',
        'generateToken',
        'login',
        'refreshToken',
        'register',
        'resetPassword',
      ].sort(),
    );
  });
});
