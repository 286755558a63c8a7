import { randomBytes } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { expect } from 'vitest';
import { routes } from '../../functions/routes';
import type { Scope } from '../../lib/auth/scopes';
import { openLoginSession } from '../../lib/auth/sessions';
import { db } from '../../lib/db/client';
import type { TestUser } from './actors';
import { expectData, invoke } from './invoke';

/** Tokens through the real routes (automation, legacy, a second sign-in), forged tokens, and unique client IPs. */

/** How a request authenticates: a bearer token, or raw headers for malformed Authorization values. */
export interface Auth {
  token?: string;
  headers?: Record<string, string>;
}

/** The access token of a new sign-in session of `user`, opened directly (the account may be inactive). */
export const freshSession = async (user: TestUser) => (await openLoginSession(db(), user.id, null)).tokens.accessToken;

export interface Minted {
  token: string;
  id: string;
}

/** A scoped automation token minted with the user's access token. */
export async function mintAutomationToken(user: TestUser, scopes: readonly Scope[], ttlDays?: number): Promise<Minted> {
  const body = ttlDays === undefined ? { scopes } : { scopes, ttlDays };
  return expectData<Minted>(await invoke(routes.generateToken, { token: user.accessToken, body }));
}

/** A legacy full-access token (generate-token without scopes). */
export async function mintLegacyToken(user: TestUser): Promise<string> {
  const data = expectData<{ token: string }>(await invoke(routes.generateToken, { token: user.accessToken, body: {} }));
  expect(data.token).toMatch(/^cebs_lt_/);
  return data.token;
}

export async function revokeAutomationToken(user: TestUser, id: string): Promise<void> {
  const result = await invoke(routes.revokeToken, { token: user.accessToken, path: { id } });
  expect(result.status, JSON.stringify(result.body)).toBe(204);
}

export async function logout(token: string): Promise<void> {
  expectData(await invoke(routes.logout, { token }));
}

let ipCounter = 0;
/** A client IP no other test of the file uses, so per-IP rate-limit windows never collide. */
export function uniqueIp(): string {
  ipCounter += 1;
  return `10.${(process.pid >> 8) & 255}.${Math.floor(ipCounter / 250) % 250}.${(ipCounter % 250) + 1}`;
}

/** The test run's signing key (vitest.config.ts) and one the service has never seen. */
export const SERVICE_KEY = new TextEncoder().encode(process.env.JWT_SECRET ?? '');
export const FOREIGN_KEY = new TextEncoder().encode(`another-key-${randomBytes(24).toString('hex')}`);

/** Signs the claims of `accessToken` again, optionally changed, with `key` (HS256). */
export async function resign(accessToken: string, key: Uint8Array, change: { sub?: string } = {}): Promise<string> {
  const claims = decodeJwt(accessToken);
  return new SignJWT({ ...claims, ...change }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
}

/** The same claims with `alg: none` and no signature. */
export function unsigned(accessToken: string): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(decodeJwt(accessToken))}.`;
}
