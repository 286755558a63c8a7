import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';

/**
 * The routes that tell whether an address has an account (check-email-availability, register,
 * send-forgot-password-link) share one per-client allowance: 10 a minute per client address.
 */

const registration = () => ({
  name: 'Enumerating Person',
  email: uniqueEmail('enum'),
  password: `pw-${randomBytes(6).toString('hex')}`,
  acceptTerms: true,
  organizationName: `Firm ${randomBytes(5).toString('hex')}`,
});

const asks = [
  (ip: string) => invoke(routes.checkEmailAvailability, { body: { email: uniqueEmail('free') }, ip }),
  (ip: string) => invoke(routes.sendForgotPasswordLink, { body: { email: uniqueEmail('forgot') }, ip }),
  (ip: string) => invoke(routes.register, { body: registration(), ip }),
];

describe('one enumeration limit over check-email-availability, register and send-forgot-password-link', () => {
  it('answers the 11th request in a minute from one client, whichever route, 429 with Retry-After', async () => {
    testClock.freeze(new Date('2026-11-22T10:00:20Z'));
    const ip = '198.51.100.71';
    for (let i = 0; i < 10; i += 1) {
      const result = await asks[i % 3]!(ip);
      expect(result.status, `request ${i + 1}`).toBeLessThan(300);
    }
    for (const ask of asks) {
      const limited = await ask(ip);
      expectError(limited, 429, 'RATE_LIMITED');
      expect(limited.headers['retry-after']).toBe('40');
    }
    // Another client is not affected.
    for (const ask of asks) expect((await ask('198.51.100.72')).status).toBeLessThan(300);
    // The next minute lets this client in again.
    testClock.advance(40);
    expectData(await asks[0]!(ip));
  });

  it('counts an IPv6 client by its /64', async () => {
    testClock.freeze(new Date('2026-11-22T10:00:20Z'));
    for (let i = 0; i < 10; i += 1) expectData(await asks[1]!(`2001:db8:71:1::${(i + 1).toString(16)}`));
    expectError(await asks[0]!('2001:db8:71:1:abcd::1'), 429, 'RATE_LIMITED');
    expectData(await asks[0]!('2001:db8:71:2::1'));
  });
});
