import { eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { routes } from '../../functions/routes';
import { db } from '../../lib/db/client';
import { billingRows } from '../../lib/db/schema';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../../lib/observability/names';
import { createUser } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, putOnPlan } from '../harness/billing';
import { caseWithAccess } from '../harness/cases';

/**
 * Metrics as Lambda writes them (issue 18): with metrics turned on (as in Lambda, where
 * AWS_LAMBDA_RUNTIME_API turns them on; here POWERTOOLS_METRICS_DISABLED=false) the real route
 * handlers write Powertools' EMF lines on stdout, which CloudWatch turns into metrics. Set before
 * anything loads lib/observability/metrics.ts, which decides once per process.
 */
vi.hoisted(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  // What Lambda sets for an on-demand execution environment (Powertools counts cold starts of those only).
  process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
  process.env.SERVICE_ENVIRONMENT = 'test-environment';
});

interface EmfLine {
  _aws: {
    CloudWatchMetrics: Array<{
      Namespace: string;
      Dimensions: string[][];
      Metrics: Array<{ Name: string; Unit: string }>;
    }>;
  };
  [key: string]: unknown;
}

let written: string[] = [];
const writeBefore = process.stdout.write.bind(process.stdout);

beforeAll(() => {
  // Powertools Metrics writes through a Console on process.stdout.
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.includes('"_aws"')) {
      written.push(text);
      return true;
    }
    return (writeBefore as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
});

afterAll(() => {
  process.stdout.write = writeBefore;
});

afterEach(async () => {
  await db().execute(sql`drop trigger if exists fail_billing_history on billing_history`);
});

/** The EMF lines written since the last call. */
function takeLines(): EmfLine[] {
  const lines = written.flatMap((chunk) => chunk.split('\n').filter((line) => line.trim() !== ''));
  written = [];
  return lines.map((line) => JSON.parse(line) as EmfLine);
}

/** The lines that hold metric `name`. */
const linesWith = (lines: EmfLine[], name: string) =>
  lines.filter((line) => line._aws.CloudWatchMetrics.some((set) => set.Metrics.some((metric) => metric.Name === name)));

describe('business metrics', () => {
  it('writes the cold-start metric once, on the first invocation, with the function name', async () => {
    // Act: the process's first invocation (register), then a second one.
    const owner = await createUser();
    const afterRegister = takeLines();
    await putOnPlan(owner, 'tier2', { card: true });
    const afterSecond = takeLines();

    // Assess
    const coldStarts = linesWith(afterRegister, 'ColdStart');
    expect(coldStarts).toHaveLength(1);
    expect(coldStarts[0]).toMatchObject({
      ColdStart: 1,
      function_name: 'local-register',
      service: SERVICE_NAME,
      environment: 'test-environment',
    });
    expect(coldStarts[0]!._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      Dimensions: [expect.arrayContaining(['service', 'environment', 'function_name'])],
      Metrics: [{ Name: 'ColdStart', Unit: 'Count' }],
    });
    expect(linesWith(afterSecond, 'ColdStart')).toEqual([]);
    // The verification mail register queued was sent after the commit.
    expect(linesWith(afterRegister, 'MailsSent')).toEqual([expect.objectContaining({ MailsSent: 1 })]);
  });

  it('counts a committed charge with its amount, under the service and environment dimensions', async () => {
    // Prepare
    const owner = await createUser();
    await putOnPlan(owner, 'tier2', { card: true });
    const target = await caseWithAccess(owner.organizationId, owner, 'owner', 'Metrics v. Charges');
    takeLines();

    // Act
    expectData(await invoke(routes.upgradeCaseToPro, { ...as(owner), path: { caseId: target.id } }));

    // Assess
    const charges = linesWith(takeLines(), 'ChargesCreated');
    expect(charges).toHaveLength(1);
    const [line] = charges;
    expect(line).toMatchObject({
      ChargesCreated: 1,
      ChargedCents: 14_900,
      CreditsAppliedCents: 0,
      service: SERVICE_NAME,
      environment: 'test-environment',
    });
    const [set] = line!._aws.CloudWatchMetrics;
    expect(set!.Namespace).toBe(METRICS_NAMESPACE);
    expect(set!.Dimensions).toEqual([['service', 'environment']]);
    expect(set!.Metrics).toEqual(
      expect.arrayContaining([
        { Name: 'ChargesCreated', Unit: 'Count' },
        { Name: 'ChargedCents', Unit: 'Count' },
        { Name: 'CreditsAppliedCents', Unit: 'Count' },
      ]),
    );
  });

  it('counts no charge whose transaction rolled back', async () => {
    // Prepare: the charge's history entry fails, after recordCharge has inserted its rows.
    const owner = await createUser();
    await putOnPlan(owner, 'tier2', { card: true });
    const target = await caseWithAccess(owner.organizationId, owner, 'owner', 'Rolled v. Back');
    await db().execute(sql`
      create or replace function fail_billing_history() returns trigger language plpgsql as $$
      begin
        if new.description like '%Rolled v. Back%' then raise exception 'history refused'; end if;
        return new;
      end $$`);
    await db().execute(sql`
      create trigger fail_billing_history before insert on billing_history
      for each row execute function fail_billing_history()`);
    takeLines();

    // Act
    const answer = await invoke(routes.upgradeCaseToPro, { ...as(owner), path: { caseId: target.id } });

    // Assess
    expectError(answer, 500, 'INTERNAL');
    expect(await db().select().from(billingRows).where(eq(billingRows.caseId, target.id))).toEqual([]);
    const lines = takeLines();
    for (const name of ['ChargesCreated', 'ChargedCents', 'CreditsAppliedCents'])
      expect(linesWith(lines, name), name).toEqual([]);
  });
});
