import { request, type Server } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLocalServer, listen } from '../../infra/local/app';
import { testClock } from '../../lib/clock';
import { LocalMailSink } from '../../lib/mail/transport';
import { createUser, uniqueEmail } from '../harness/actors';

/**
 * Issue 31: sign-in limits over real client addresses. The local server builds the event's
 * sourceIp from the socket, so each request below binds its own loopback address (127.0.0.x).
 */

let server: Server;
let base: URL;

beforeAll(async () => {
  server = createLocalServer({ mailSink: new LocalMailSink() });
  base = new URL(await listen(server, 0));
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** POST /auth/login from `localAddress`: the status, Retry-After and body. */
function signInFrom(localAddress: string, email: string, password: string) {
  const payload = JSON.stringify({ email, password });
  return new Promise<{ status: number; retryAfter: string | undefined; body: any }>((resolve, reject) => {
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        path: '/auth/login',
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] as string | undefined,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('sign-in limits across client addresses (local server, loopback addresses)', () => {
  /** Two minutes into a 15-minute window: a test never straddles a window boundary. */
  beforeEach(() => testClock.freeze(new Date('2026-11-22T10:02:00.000Z')));

  it('holds an account after 20 failures from several addresses, but not at an address it signed in from before', async () => {
    // Prepare: the owner signs in from 127.0.0.2; guesses come from 127.0.0.3 to 127.0.0.6 (5 each)
    const user = await createUser();
    expect((await signInFrom('127.0.0.2', user.email, user.password)).status).toBe(200);
    for (let i = 0; i < 20; i += 1) {
      const guess = await signInFrom(`127.0.0.${3 + (i % 4)}`, user.email, `wrong-${i}-password`);
      expect(guess.status, `guess ${i + 1}`).toBe(401);
    }
    // Act: the right password from a new address, and from the known one
    const elsewhere = await signInFrom('127.0.0.7', user.email, user.password);
    const known = await signInFrom('127.0.0.2', user.email, user.password);
    // Assess
    expect(elsewhere.status).toBe(429);
    expect(elsewhere.body.error.code).toBe('RATE_LIMITED');
    expect(Number(elsewhere.retryAfter)).toBeGreaterThan(0);
    expect(known.status).toBe(200);
    expect(known.body.data.userProfile.id).toBe(user.id);
  });

  it("does not lock out, behind one address, an account that signed in there before, after others' failures there", async () => {
    // Prepare: a regular signs in from 127.0.0.8; 100 failures over 20 other accounts from there
    const regular = await createUser();
    expect((await signInFrom('127.0.0.8', regular.email, regular.password)).status).toBe(200);
    for (let a = 0; a < 20; a += 1) {
      const email = uniqueEmail('nat');
      for (let i = 0; i < 5; i += 1) expect((await signInFrom('127.0.0.8', email, 'Winter2026!')).status).toBe(401);
    }
    const newcomer = await createUser();
    // Act and assess: the address is held for others, not for the regular
    expect((await signInFrom('127.0.0.8', uniqueEmail('nat'), 'Winter2026!')).status).toBe(429);
    expect((await signInFrom('127.0.0.8', newcomer.email, newcomer.password)).status).toBe(429);
    expect((await signInFrom('127.0.0.8', regular.email, regular.password)).status).toBe(200);
    // Another address is not held.
    expect((await signInFrom('127.0.0.9', newcomer.email, newcomer.password)).status).toBe(200);
  });
});
