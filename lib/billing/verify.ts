import { type SQL, sql } from 'drizzle-orm';
import { db } from '../db/client';
import { rawRows } from '../db/raw-rows';
import { isUuid } from '../ids';
import { addDays, now } from '../clock';
import { PRO_TIERS } from './case-pro';
import { BILLING_ROW_STATUS, CHARGED_STATUSES, sqlStatuses } from './billing-row-lifecycle';
import { DELINQUENCY_DAYS } from './summary';
import { PRO_UPGRADE_SKU } from './tiers';
import { totalsColumns } from './statements';

/**
 * What `verifyBilling` checks; each difference names one:
 *
 * - `credit_balance`: organizations.credit_balance_cents = the sum of the organization's ledger amounts.
 * - `credit_balance_negative`: the balance is not below zero.
 * - `ledger_chain`: in (created_at, id) order, each balance_after_cents = the previous entry's (0 before the first) + amount_cents.
 * - `ledger_negative`: no balance_after_cents below zero.
 * - `ledger_charge_unlinked`: a 'charge' entry links a billing row of the same organization.
 * - `row_amount`: amount_cents = quantity * unit_amount_cents.
 * - `row_credits_applied`: 0 <= credits_applied_cents <= max(amount_cents, 0).
 * - `charge_credits`: per charge (rows sharing charge_key), the credits applied = minus the 'charge' ledger entries linked to its rows.
 * - `charge_status`: the rows of one charge share one status.
 * - `charge_invoice`: the rows of one charge share one invoice id (or all have none).
 * - `charged_total`: the charged total as the statements compute it (rows in a charged status, not
 *   informational) = the same total summed per charge, each charge counted by the status of its first row.
 * - `sandbox_invoice`: a sandbox invoice's amount = the sum over the rows on it of amount minus credits applied.
 * - `case_pro`: each case Pro now has its source: 'paid' with a paid Pro upgrade row, or 'plan' with
 *   a Pro-including tier in force (not delinquent; unpaid, its Pro ends with the days to pay).
 */
export type VerifyCheck =
  | 'credit_balance'
  | 'credit_balance_negative'
  | 'ledger_chain'
  | 'ledger_negative'
  | 'ledger_charge_unlinked'
  | 'row_amount'
  | 'row_credits_applied'
  | 'charge_credits'
  | 'charge_status'
  | 'charge_invoice'
  | 'charged_total'
  | 'sandbox_invoice'
  | 'case_pro';

export interface Difference {
  organizationId: string;
  check: VerifyCheck;
  /** What the other rows say the value should be (cents, or a description for status/invoice checks). */
  expected: number | string;
  /** What is stored. */
  actual: number | string;
  /** Which rows: ledger entry, billing row, charge key or invoice id. */
  detail: string;
}

export interface VerifyResult {
  organizationsChecked: number;
  differences: Difference[];
}

/** Postgres bigint arrives as a string (postgres.js) or a number/bigint (PGlite). */
const num = (value: unknown): number => Number(value);

const charged = sql.join(
  CHARGED_STATUSES.map((status) => sql`${status}`),
  sql`, `,
);

/**
 * Recomputes every organization's billing (or one's) from the rows and lists what does not add up;
 * an empty list means the ledger, the balances, the billing rows and the sandbox invoices agree.
 * Nine queries whatever the number of organizations (sums and the ledger chain are computed in
 * SQL), in one read-only repeatable-read snapshot so a charge committing meanwhile is never half seen.
 * An id that names no organization checks nothing: `organizationsChecked` is 0.
 */
export async function verifyBilling(organizationId?: string): Promise<VerifyResult> {
  if (organizationId !== undefined && !isUuid(organizationId)) return { organizationsChecked: 0, differences: [] };
  /** `and <column> = <id>` when verifying one organization. */
  const only = (column: string): SQL =>
    organizationId === undefined ? sql`` : sql` and ${sql.raw(column)} = ${organizationId}::uuid`;

  return db().transaction(
    async (tx) => {
      const differences: Difference[] = [];
      const [counted] = await rawRows<{ n: number }>(
        tx,
        sql`select count(*)::int as n from organizations o where true${only('o.id')}`,
      );

      for (const r of await rawRows<{
        organization_id: string;
        balance: number;
        ledger_total: unknown;
        entries: number;
      }>(
        tx,
        sql`select o.id as organization_id, o.credit_balance_cents as balance, coalesce(l.total, 0) as ledger_total, coalesce(l.entries, 0)::int as entries
            from organizations o
            left join (
              select organization_id, sum(amount_cents)::bigint as total, count(*) as entries
              from credit_ledger where true${only('organization_id')} group by organization_id
            ) l on l.organization_id = o.id
            where (o.credit_balance_cents <> coalesce(l.total, 0) or o.credit_balance_cents < 0)${only('o.id')}`,
      )) {
        if (r.balance !== num(r.ledger_total)) {
          differences.push({
            organizationId: r.organization_id,
            check: 'credit_balance',
            expected: num(r.ledger_total),
            actual: r.balance,
            detail: `organizations.credit_balance_cents against the sum of ${r.entries} ledger entries`,
          });
        }
        if (r.balance < 0)
          differences.push({
            organizationId: r.organization_id,
            check: 'credit_balance_negative',
            expected: 0,
            actual: r.balance,
            detail: 'organizations.credit_balance_cents is below zero',
          });
      }

      for (const r of await rawRows<{
        organization_id: string;
        id: string;
        position: unknown;
        amount_cents: number;
        balance_after_cents: number;
        previous: number;
      }>(
        tx,
        sql`select organization_id, id, position, amount_cents, balance_after_cents, previous from (
              select organization_id, id, amount_cents, balance_after_cents,
                lag(balance_after_cents, 1, 0) over w as previous,
                row_number() over w as position
              from credit_ledger where true${only('organization_id')}
              window w as (partition by organization_id order by created_at, id)
            ) chain
            where balance_after_cents::bigint <> previous::bigint + amount_cents or balance_after_cents < 0`,
      )) {
        const entry = `ledger entry ${r.id} (#${num(r.position)})`;
        if (r.balance_after_cents !== r.previous + r.amount_cents) {
          differences.push({
            organizationId: r.organization_id,
            check: 'ledger_chain',
            expected: r.previous + r.amount_cents,
            actual: r.balance_after_cents,
            detail: `${entry}: balance_after_cents against ${r.previous} before it + amount ${r.amount_cents}`,
          });
        }
        if (r.balance_after_cents < 0)
          differences.push({
            organizationId: r.organization_id,
            check: 'ledger_negative',
            expected: 0,
            actual: r.balance_after_cents,
            detail: `${entry}: balance_after_cents is below zero`,
          });
      }

      for (const r of await rawRows<{
        organization_id: string;
        id: string;
        amount_cents: number;
        billing_row_id: string | null;
        row_organization_id: string | null;
      }>(
        tx,
        sql`select l.organization_id, l.id, l.amount_cents, l.billing_row_id, r.organization_id as row_organization_id
            from credit_ledger l left join billing_rows r on r.id = l.billing_row_id
            where l.kind = 'charge' and (r.id is null or r.organization_id <> l.organization_id)${only('l.organization_id')}`,
      )) {
        differences.push({
          organizationId: r.organization_id,
          check: 'ledger_charge_unlinked',
          expected: 'a billing row of this organization',
          actual:
            r.billing_row_id === null
              ? 'none'
              : r.row_organization_id === null
                ? `missing row ${r.billing_row_id}`
                : `row ${r.billing_row_id} of organization ${r.row_organization_id}`,
          detail: `charge ledger entry ${r.id} of ${r.amount_cents} cents`,
        });
      }

      for (const r of await rawRows<{
        organization_id: string;
        id: string;
        charge_key: string;
        quantity: number;
        unit_amount_cents: number;
        amount_cents: number;
        credits_applied_cents: number;
      }>(
        tx,
        sql`select organization_id, id, charge_key, quantity, unit_amount_cents, amount_cents, credits_applied_cents
            from billing_rows
            where (amount_cents::bigint <> quantity::bigint * unit_amount_cents or credits_applied_cents < 0 or credits_applied_cents > greatest(amount_cents, 0))${only('organization_id')}`,
      )) {
        const row = `billing row ${r.id} (charge ${r.charge_key})`;
        if (r.amount_cents !== r.quantity * r.unit_amount_cents) {
          differences.push({
            organizationId: r.organization_id,
            check: 'row_amount',
            expected: r.quantity * r.unit_amount_cents,
            actual: r.amount_cents,
            detail: `${row}: amount_cents against quantity ${r.quantity} x unit ${r.unit_amount_cents}`,
          });
        }
        if (r.credits_applied_cents < 0 || r.credits_applied_cents > Math.max(r.amount_cents, 0)) {
          differences.push({
            organizationId: r.organization_id,
            check: 'row_credits_applied',
            expected: `0..${Math.max(r.amount_cents, 0)}`,
            actual: r.credits_applied_cents,
            detail: `${row}: credits_applied_cents outside 0..max(amount ${r.amount_cents}, 0)`,
          });
        }
      }

      for (const r of await rawRows<{
        organization_id: string;
        charge_key: string;
        credits_applied: unknown;
        drawn: unknown;
        statuses: number;
        status_list: string;
        invoices: number;
        without_invoice: number;
        invoice_list: string | null;
        row_count: number;
      }>(
        tx,
        sql`with charges as (
              select organization_id, charge_key, count(*)::int as row_count,
                sum(credits_applied_cents)::bigint as credits_applied,
                count(distinct status)::int as statuses, string_agg(distinct status, ', ' order by status) as status_list,
                count(distinct invoice_id)::int as invoices, (count(*) filter (where invoice_id is null))::int as without_invoice,
                string_agg(distinct invoice_id, ', ' order by invoice_id) as invoice_list
              from billing_rows where true${only('organization_id')}
              group by organization_id, charge_key
            ), drawn as (
              select r.organization_id, r.charge_key, -sum(l.amount_cents)::bigint as drawn
              from credit_ledger l join billing_rows r on r.id = l.billing_row_id
              where l.kind = 'charge'${only('r.organization_id')}
              group by r.organization_id, r.charge_key
            )
            select c.*, coalesce(d.drawn, 0) as drawn
            from charges c left join drawn d on d.organization_id = c.organization_id and d.charge_key = c.charge_key
            where c.credits_applied <> coalesce(d.drawn, 0) or c.statuses > 1 or c.invoices > 1 or (c.invoices = 1 and c.without_invoice > 0)`,
      )) {
        const charge = `charge ${r.charge_key} (${r.row_count} row(s))`;
        if (num(r.credits_applied) !== num(r.drawn)) {
          differences.push({
            organizationId: r.organization_id,
            check: 'charge_credits',
            expected: num(r.drawn),
            actual: num(r.credits_applied),
            detail: `${charge}: credits_applied_cents against the charge ledger entries linked to its rows`,
          });
        }
        if (r.statuses > 1)
          differences.push({
            organizationId: r.organization_id,
            check: 'charge_status',
            expected: 'one status',
            actual: r.status_list,
            detail: `${charge}: rows in different statuses`,
          });
        if (r.invoices > 1 || (r.invoices === 1 && r.without_invoice > 0)) {
          differences.push({
            organizationId: r.organization_id,
            check: 'charge_invoice',
            expected: 'one invoice id',
            actual: [r.invoice_list, r.without_invoice > 0 ? `${r.without_invoice} row(s) without` : null]
              .filter(Boolean)
              .join('; '),
            detail: `${charge}: rows on different invoices`,
          });
        }
      }

      for (const r of await rawRows<{ organization_id: string; by_rows: unknown; by_charges: unknown }>(
        tx,
        sql`with by_rows as (
              select organization_id, ${totalsColumns.chargedCents} as total
              from billing_rows where true${only('organization_id')} group by organization_id
            ), charges as (
              select organization_id, (array_agg(status order by idempotency_key))[1] as status,
                coalesce(sum(amount_cents) filter (where not informational), 0)::bigint as amount
              from billing_rows where true${only('organization_id')} group by organization_id, charge_key
            ), by_charges as (
              select organization_id, coalesce(sum(amount) filter (where status in (${charged})), 0)::bigint as total
              from charges group by organization_id
            )
            select r.organization_id, r.total as by_rows, c.total as by_charges
            from by_rows r join by_charges c on c.organization_id = r.organization_id
            where r.total <> c.total`,
      )) {
        differences.push({
          organizationId: r.organization_id,
          check: 'charged_total',
          expected: num(r.by_charges),
          actual: num(r.by_rows),
          detail: 'charged total summed per charge (by its status) against summed per row (as statements report it)',
        });
      }

      for (const r of await rawRows<{
        organization_id: string;
        invoice_id: string;
        invoice_amount: number;
        expected: unknown;
        row_count: number;
      }>(
        tx,
        sql`select r.organization_id, r.invoice_id, i.amount_cents as invoice_amount,
              sum(r.amount_cents - r.credits_applied_cents)::bigint as expected, count(*)::int as row_count
            from billing_rows r join sandbox_invoices i on i.id = r.invoice_id
            where true${only('r.organization_id')}
            group by r.organization_id, r.invoice_id, i.amount_cents
            having i.amount_cents <> sum(r.amount_cents - r.credits_applied_cents)`,
      )) {
        differences.push({
          organizationId: r.organization_id,
          check: 'sandbox_invoice',
          expected: num(r.expected),
          actual: r.invoice_amount,
          detail: `sandbox invoice ${r.invoice_id}: amount_cents against ${r.row_count} row(s) on it, amount minus credits applied`,
        });
      }

      const at = now().toISOString();
      const delinquentSince = addDays(now(), -DELINQUENCY_DAYS).toISOString();
      const proTiers = sql.join(
        PRO_TIERS.map((tier) => sql`${tier}`),
        sql`, `,
      );
      for (const r of await rawRows<{
        organization_id: string;
        id: string;
        pro_source: string | null;
        source_found: string;
      }>(
        tx,
        sql`select c.organization_id, c.id, c.pro_source,
              case
                when exists (select 1 from billing_rows b where b.case_id = c.id and b.sku_key = ${PRO_UPGRADE_SKU.key} and b.status = ${sqlStatuses(BILLING_ROW_STATUS.paid)}) then 'a paid Pro upgrade'
                when o.billing_mode = 'pay_as_you_go' and o.billing_tier in (${proTiers}) and (o.base_fee_failed_at is null or o.base_fee_failed_at >= ${delinquentSince}::timestamptz) then 'a Pro-including plan in force'
                else 'none'
              end as source_found
            from cases c join organizations o on o.id = c.organization_id
            where c.is_pro and (c.pro_until is null or c.pro_until > ${at}::timestamptz)${only('c.organization_id')}
            order by c.id`,
      )) {
        const expected = r.pro_source === 'paid' ? 'a paid Pro upgrade' : 'a Pro-including plan in force';
        // A paid upgrade is a source whatever the case says; the plan is one only for plan-Pro cases.
        if (r.source_found === 'a paid Pro upgrade' || r.source_found === expected) continue;
        differences.push({
          organizationId: r.organization_id,
          check: 'case_pro',
          expected,
          actual: r.source_found,
          detail: `case ${r.id} is Pro (source ${r.pro_source ?? 'none'})`,
        });
      }

      // Grouped by organization (stable: within one, in the order of the checks above).
      differences.sort((a, b) =>
        a.organizationId < b.organizationId ? -1 : a.organizationId > b.organizationId ? 1 : 0,
      );
      return { organizationsChecked: counted?.n ?? 0, differences };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}
