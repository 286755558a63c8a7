import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { routes } from '../../functions/routes';
import { useSecretReader } from '../../lib/aws/secrets';
import { paymentProcessor, usePaymentProcessor } from '../../lib/billing/processor';
import { overrideConfig, SECRET_MAX_AGE_SECONDS } from '../../lib/config';
import { db } from '../../lib/db/client';
import { billingRows, organizations } from '../../lib/db/schema';
import { runMaintenance } from '../../lib/maintenance';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { captureLogOutput } from '../harness/log-output';
import { DOUBLE_SECRET_KEY, DOUBLE_WEBHOOK_SECRET, useStripeDouble } from '../harness/stripe-double';
import { organizationRow } from '../harness/organizations';

/**
 * Issue 32: deployed, the stack creates the Stripe secret empty. What needs the processor answers
 * 503 PAYMENTS_NOT_CONFIGURED with Retry-After (never the sandbox, which the bundles do not carry,
 * never a 500); registration succeeds and leaves the customer to maintenance, which skips processor
 * work cleanly until the keys are there; a warm function picks the keys up once the secret's
 * time-to-live has passed, without a cold start. Secrets Manager is an in-memory stand-in behind
 * Powertools Parameters (lib/aws/secrets.ts); Stripe is the double.
 */

const double = useStripeDouble();
const STRIPE_ARN = 'arn:aws:secretsmanager:eu-central-1:123456789012:secret:cebs/stripe-AbCdEf';
const EMPTY_KEYS = JSON.stringify({ STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '' });
const urls = { successUrl: 'https://app.example.test/done', cancelUrl: 'https://app.example.test/cancel' };

let secrets: Record<string, string>;
let reads: number;
let restore: (() => void) | undefined;

beforeEach(() => {
  // Deployed as the stack deploys it: keys only through STRIPE_SECRET_ARN, whose secret is empty.
  restore = overrideConfig({
    STRIPE_SECRET_ARN: STRIPE_ARN,
    STRIPE_SECRET_KEY: undefined,
    STRIPE_WEBHOOK_SECRET: undefined,
  });
  secrets = { [STRIPE_ARN]: EMPTY_KEYS };
  reads = 0;
  useSecretReader(async (id) => {
    reads += 1;
    const value = secrets[id];
    if (value === undefined) throw new Error(`ResourceNotFoundException: ${id}`);
    return value;
  });
  usePaymentProcessor(undefined);
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  useSecretReader(undefined);
  restore?.();
  restore = undefined;
  usePaymentProcessor(undefined);
});

function expectNotConfigured(answer: Awaited<ReturnType<typeof invoke>>) {
  expectError(answer, 503, 'PAYMENTS_NOT_CONFIGURED');
  expect(Number(answer.headers['retry-after'])).toBe(SECRET_MAX_AGE_SECONDS.stripe);
}

/** Moves the wall clock (Date only, which Powertools' cache reads) past the Stripe secret's time-to-live. */
function passStripeSecretTtl() {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() + (SECRET_MAX_AGE_SECONDS.stripe + 1) * 1000);
}

describe('payments not configured', () => {
  it('answers 503 PAYMENTS_NOT_CONFIGURED where the processor is needed; registration and maintenance carry on without failures', async () => {
    const lines: string[] = [];
    captureLogOutput(lines);
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    expect((await organizationRow(owner.organizationId)).processorCustomerId).toBeNull();

    const before = await organizationRow(owner.organizationId);
    expectNotConfigured(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    const after = await organizationRow(owner.organizationId);
    expect(after).toMatchObject({ billingTier: before.billingTier, billingMode: before.billingMode });
    expect(await db().select().from(billingRows).where(eq(billingRows.organizationId, owner.organizationId))).toEqual(
      [],
    );
    // An organization on case billing (as an operator can set it) asking for a card set-up link.
    await db()
      .update(organizations)
      .set({ billingMode: 'pay_as_you_go' })
      .where(eq(organizations.id, owner.organizationId));
    expectNotConfigured(await invoke(routes.createBillingSetupSession, { ...as, body: urls }));

    const counts = await runMaintenance();
    expect(counts).toMatchObject({ customersCreated: 0, chargesRetried: 0, invoicesVoided: 0 });
    vi.restoreAllMocks();
    const failures = lines.filter((line) => /failed|"level":"(ERROR|WARN)"/i.test(line));
    expect(failures).toEqual([]);
    expect(double.requests.length).toBe(0);
  });

  it('never falls back to the sandbox in a Lambda function, even without a Stripe secret to read', async () => {
    restore?.();
    restore = overrideConfig({
      AWS_LAMBDA_FUNCTION_NAME: 'CaseEvidence-dev-SelectPlan',
      STRIPE_SECRET_ARN: undefined,
      STRIPE_SECRET_KEY: undefined,
    });
    await expect(paymentProcessor()).rejects.toMatchObject({ code: 'PAYMENTS_NOT_CONFIGURED' });
  });

  it('a warm function answers with the processor once the keys are put in and the time-to-live has passed', async () => {
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    expectNotConfigured(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));

    // The operator puts the keys in (aws secretsmanager put-secret-value).
    secrets[STRIPE_ARN] = JSON.stringify({
      STRIPE_SECRET_KEY: DOUBLE_SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: DOUBLE_WEBHOOK_SECRET,
    });
    // Within the time-to-live the value read before still holds: no Secrets Manager call per request.
    const readsBefore = reads;
    expectNotConfigured(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    expect(reads).toBe(readsBefore);

    passStripeSecretTtl();
    const selected = expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    expect(selected).toMatchObject({ tier: 'tier2', paymentRequired: true, setupSessionUrl: expect.any(String) });
    expect((await organizationRow(owner.organizationId)).processorCustomerId).toMatch(/^cus_/);
    expect(double.requests.length).toBeGreaterThan(0);
  });

  it('maintenance creates the customers registration left to it once the keys are there', async () => {
    const owner = await createUser();
    expect((await organizationRow(owner.organizationId)).processorCustomerId).toBeNull();
    secrets[STRIPE_ARN] = JSON.stringify({ STRIPE_SECRET_KEY: DOUBLE_SECRET_KEY, STRIPE_WEBHOOK_SECRET: '' });
    passStripeSecretTtl();
    await runMaintenance();
    expect((await organizationRow(owner.organizationId)).processorCustomerId).toMatch(/^cus_/);
  });

  it('a failed read of the secret is not kept: the next request reads it again', async () => {
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    secrets = {};
    passStripeSecretTtl();
    expectError(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }), 500, 'INTERNAL');
    secrets = { [STRIPE_ARN]: JSON.stringify({ STRIPE_SECRET_KEY: DOUBLE_SECRET_KEY }) };
    expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
  });
});
