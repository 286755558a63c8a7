import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import postgres from 'postgres';
import { MAX_REPORT_ROWS } from '../../lib/billing/report';
import { freshBenchDatabase } from './fresh-database';

export interface ReportBenchResult {
  rows: number;
  json: { elapsedMs: number; peakRssMb: number; payloadBytes: number };
  pdf: { elapsedMs: number; peakRssMb: number; payloadBytes: number };
}

/**
 * Seeds one organization with 50,000 billing rows over 200 cases on a fresh database, then times
 * POST /billing/report's work (lib/billing/report) as JSON and as PDF, each in its own process.
 */
export async function benchBillingReport(adminUrl: string): Promise<ReportBenchResult> {
  const { url, connection } = await freshBenchDatabase(adminUrl, 'cebs_bench_report');
  await connection.close();

  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const [user] =
    await sql`insert into users (id, email, name, password_hash, created_at, updated_at) values (gen_random_uuid(), 'report@example.com', 'Report Bench', 'x', now(), now()) returning id`;
  const [organization] = await sql`
    insert into organizations (id, name, slug, email, billing_mode, billing_tier, billing_cadence, billing_period_start, created_at, updated_at)
    values (gen_random_uuid(), 'Report Bench LLP', 'report-bench-llp', 'report@example.com', 'pay_as_you_go', 'tier2', 'monthly', now() - interval '30 days', now(), now())
    returning id`;
  await sql`
    insert into cases (id, organization_id, name, created_at, updated_at)
    select gen_random_uuid(), ${organization!.id}, 'Bench case ' || n, now(), now() from generate_series(1, 200) n`;
  await sql`
    insert into billing_rows (id, organization_id, case_id, sku_key, description, quantity, unit_amount_cents, amount_cents, status, informational, invoice_id, idempotency_key, charge_key, created_at, updated_at)
    select gen_random_uuid(), ${organization!.id}, c.id, 'case_pro_upgrade', 'Pro upgrade of case ' || c.name || ' #' || n, 1, 14900, 14900,
           (array['paid','paid','paid','INVOICED','failed','plan_included'])[1 + n % 6], n % 6 = 5, 'in_bench_' || n,
           'bench:' || n || ':0', 'bench:' || n, now() - (n || ' seconds')::interval, now()
    from generate_series(1, ${MAX_REPORT_ROWS}) n
    join lateral (select id, name from cases where organization_id = ${organization!.id} offset (n % 200) limit 1) c on true`;
  await sql.end();

  const worker = resolve(import.meta.dirname, 'report-worker.ts');
  const run = (format: 'json' | 'pdf') =>
    JSON.parse(
      execFileSync('tsx', [worker, url, organization!.id, user!.id, format], {
        encoding: 'utf8',
        env: { ...process.env, LOG_LEVEL: 'ERROR' },
      })
        .trim()
        .split('\n')
        .at(-1)!,
    );
  return { rows: MAX_REPORT_ROWS, json: run('json'), pdf: run('pdf') };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchBillingReport(process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres');
  console.log(JSON.stringify(result, null, 2));
}
