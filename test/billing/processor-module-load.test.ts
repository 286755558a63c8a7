import { afterEach, describe, expect, it, vi } from 'vitest';
import { routes } from '../../functions/routes';
import { paymentProcessor } from '../../lib/billing/processor';
import { createUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';
import { useStripeDouble } from '../harness/stripe-double';

/**
 * Issue 32: a lazily imported module that failed to load (a chunk missing or unreadable for a
 * moment) is not kept as a rejected promise: the next call imports it again, where the cached
 * rejection made a warm function fail every request until its next cold start. Its own file: the
 * processor module must not have been imported before it is made to fail.
 */

useStripeDouble();
const urls = { successUrl: 'https://app.example.test/done', cancelUrl: 'https://app.example.test/cancel' };

afterEach(() => {
  vi.doUnmock('../../lib/billing/processor/stripe');
});

describe('a failed load of the processor module', () => {
  it('is tried again on the next call instead of failing until a cold start', async () => {
    vi.doMock('../../lib/billing/processor/stripe', () => {
      throw new Error('Cannot find module ./chunks/stripe-XXXXXXXX.mjs');
    });
    await expect(paymentProcessor()).rejects.toThrow();
    vi.doUnmock('../../lib/billing/processor/stripe');
    expect((await paymentProcessor()).name).toBe('stripe');

    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    expect(
      expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } })).setupSessionUrl,
    ).toEqual(expect.any(String));
  });
});
