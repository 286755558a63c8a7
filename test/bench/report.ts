import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import postgres from 'postgres';
import { MAX_REPORT_ROWS } from '../../lib/billing/report';
import { bundleWorker } from './bundle-worker';
import { freshBenchDatabase } from './fresh-database';
import type { ReportWorkerResult } from './report-worker';

/** Issue 19's targets for the 50,000-row report. */
export const REPORT_TARGETS = { jsonPeakRssMb: 200, pdfPeakRssMb: 250, pdfToJsonTime: 4 } as const;

type ReportRun = Omit<ReportWorkerResult, 'format'>;

export interface ReportBenchResult {
  rows: number;
  json: ReportRun;
  pdf: ReportRun;
  /** PDF time over JSON time, both of this run. */
  pdfToJsonTime: number;
  targets: typeof REPORT_TARGETS;
  passed: boolean;
}

/**
 * Seeds one organization with 50,000 billing rows over 200 cases on a fresh database, then times
 * POST /billing/report's work (lib/billing/report) as JSON and as PDF, each in its own process:
 * report-worker.ts bundled as the cloud function is bundled and run with plain node, so the peak
 * RSS is what the function would hold (under tsx the process starts about 150 MB higher). The PDF
 * is stored in a temporary directory, as on the local server.
 */
export async function benchBillingReport(adminUrl: string): Promise<ReportBenchResult> {
  const { url, connection } = await freshBenchDatabase(adminUrl, 'cebs_bench_report');
  await connection.close();

  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const [user] =
    await sql`insert into users (id, email, name, password_hash, created_at, updated_at) values (gen_random_uuid(), 'report@example.com', 'Report Bench', 'x', now(), now()) returning id`;
  const [organization] = await sql`
    insert into organizations (id, name, slug, email, billing_mode, billing_tier, billing_cadence, billing_period_start, created_at, updated_at)
    values (gen_random_uuid(), 'Report Bench LLP', 'report-bench-llp', 'report@example.com', 'pay_as_you_go', 'tier3', 'monthly', now() - interval '30 days', now(), now())
    returning id`;
  // Billing reports come with tier3 and above, read from the organization's plan row (issue 30).
  await sql`
    insert into organization_plans (id, organization_id, type, seats, devices, storage_bytes, created_at, updated_at)
    values (gen_random_uuid(), ${organization!.id}, 'tier3', 10, 10, 1099511627776, now(), now())`;
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

  const workDir = mkdtempSync(join(tmpdir(), 'cebs-bench-report-'));
  try {
    const worker = await bundleWorker(resolve(import.meta.dirname, 'report-worker.ts'), workDir);
    const { STORAGE_BUCKET: _bucket, NODE_OPTIONS: _nodeOptions, ...inherited } = process.env;
    const run = (format: 'json' | 'pdf'): ReportRun => {
      const { format: _format, ...result } = JSON.parse(
        execFileSync(process.execPath, [worker, url, organization!.id, user!.id, format], {
          encoding: 'utf8',
          env: { ...inherited, DATA_DIR: join(workDir, 'data'), LOG_LEVEL: 'ERROR' },
        })
          .trim()
          .split('\n')
          .at(-1)!,
      ) as ReportWorkerResult;
      return result;
    };
    const json = run('json');
    const pdf = run('pdf');
    const pdfToJsonTime = Number((pdf.elapsedMs / json.elapsedMs).toFixed(2));
    const passed =
      json.peakRssMb <= REPORT_TARGETS.jsonPeakRssMb &&
      pdf.peakRssMb <= REPORT_TARGETS.pdfPeakRssMb &&
      pdfToJsonTime <= REPORT_TARGETS.pdfToJsonTime;
    return { rows: MAX_REPORT_ROWS, json, pdf, pdfToJsonTime, targets: REPORT_TARGETS, passed };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchBillingReport(process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres');
  console.log(JSON.stringify(result, null, 2));
}
