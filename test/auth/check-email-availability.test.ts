import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { extractionCodes } from '../../lib/db/schema';
import { hashToken } from '../../lib/secrets';
import { createUser, uniqueEmail } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { describeSecurity } from '../harness/security';

describe('POST /auth/check-email-availability', () => {
  it('tells a free address from one taken by a user or by a custodian', async () => {
    const user = await createUser();
    const custodian = uniqueEmail('custodian');
    await db()
      .insert(extractionCodes)
      .values({ organizationId: user.organizationId, codeHash: hashToken('code-1'), custodianEmail: custodian });

    const free = await invoke(routes.checkEmailAvailability, {
      body: { email: uniqueEmail('free') },
      ip: '198.51.100.1',
    });
    const taken = await invoke(routes.checkEmailAvailability, {
      body: { email: user.email.toUpperCase() },
      ip: '198.51.100.1',
    });
    const custodial = await invoke(routes.checkEmailAvailability, {
      body: { email: custodian.toUpperCase() },
      ip: '198.51.100.1',
    });

    expect(expectData(free)).toEqual({ isAvailable: true, type: null });
    expect(expectData(taken)).toEqual({ isAvailable: false, type: 'user' });
    expect(expectData(custodial)).toEqual({ isAvailable: false, type: 'custodian' });
  });

  it('can only hold custodian emails lowercased, so the lowercased comparison never misses one', async () => {
    const user = await createUser();
    const failure = await db()
      .insert(extractionCodes)
      .values({
        organizationId: user.organizationId,
        codeHash: hashToken('code-2'),
        custodianEmail: 'Mixed.Case@Example.com',
      })
      .then(
        () => null,
        (error: Error & { cause?: Error }) => `${error.message} ${error.cause?.message ?? ''}`,
      );
    expect(failure).toContain('extraction_codes_custodian_email_lowercase');
  });

  it('allows 10 requests per minute per client, then 429 with Retry-After, then again in the next minute', async () => {
    testClock.freeze(new Date('2026-11-22T10:00:15Z'));
    const ask = () => invoke(routes.checkEmailAvailability, { body: { email: 'a@example.com' }, ip: '198.51.100.2' });
    for (let i = 0; i < 10; i += 1) expectData(await ask());
    const limited = await ask();
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe('45');
    // Another client is not affected.
    expectData(await invoke(routes.checkEmailAvailability, { body: { email: 'a@example.com' }, ip: '198.51.100.3' }));
    testClock.advance(45);
    expectData(await ask());
  });

  it.each([[{}], [{ email: 'not-an-email' }], [{ email: 7 }], [{ email: `${'a'.repeat(250)}@example.com` }]])(
    'answers 400 naming body.email for %j',
    async (body) => {
      expectError(await invoke(routes.checkEmailAvailability, { body, ip: '198.51.100.4' }), 400, 'VALIDATION_FAILED', [
        'body.email',
      ]);
    },
  );
});

describeSecurity(routes.checkEmailAvailability, { request: () => ({ body: { email: uniqueEmail('free') } }) });
