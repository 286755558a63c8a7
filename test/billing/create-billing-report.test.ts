import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { pdfText } from '../harness/pdf-text';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { MAX_REPORT_ROWS } from '../../lib/billing/report';
import { formatCents } from '../../lib/billing/report-pdf';
import { addSeconds, now, testClock } from '../../lib/clock';
import { overrideConfig, publicBaseUrl } from '../../lib/config';
import { db } from '../../lib/db/client';
import { billingHistory } from '../../lib/db/schema';
import { createCaseRow, createUser, type TestUser } from '../harness/actors';
import { useTemporaryObjectStorage } from '../harness/object-storage';
import { expectData, expectError, invoke } from '../harness/invoke';
import { as, insertRows, onTierWithoutCharges, putOnPlan } from '../harness/billing';
import { describeSecurity } from '../harness/security';

const report = (user: TestUser, body: unknown) => invoke(routes.createBillingReport, { ...as(user), body });

// PDFs go to a directory of this file, never to the repository's .data.
const { storage, root: storageRoot } = useTemporaryObjectStorage('report-test');

/** The PDF's sections: heading, then the rows between the column titles and the subtotal line. */
function pdfSections(lines: string[]) {
  const sections: { heading: string; rows: string[]; subtotal: string }[] = [];
  lines.forEach((line, index) => {
    if (!line.startsWith('Date       SKU')) return;
    const end = lines.findIndex((candidate, at) => at > index && candidate.startsWith('Subtotal charged'));
    sections.push({ heading: lines[index - 1]!, rows: lines.slice(index + 1, end), subtotal: lines[end]! });
  });
  return sections;
}

/** Billing reports come with tier3 and above (issue 30): an owner on tier3, with no billing row of its own. */
async function reportingOwner(options?: Parameters<typeof createUser>[0]) {
  const owner = await createUser(options);
  await onTierWithoutCharges(owner.organizationId, 'tier3');
  return owner;
}

const WINDOW_START = new Date('2026-03-01T00:00:00.000Z');
const WINDOW_END = new Date('2026-03-31T23:59:59.999Z');
const inWindow = (minutes: number) => new Date(WINDOW_START.getTime() + minutes * 60_000);
const window = { startDate: WINDOW_START.toISOString(), endDate: WINDOW_END.toISOString() };

/**
 * Case A holds one row of every status; case B a paid Pro upgrade; the organization a paid base
 * fee. Rows just outside the window and another organization's rows must never show.
 */
async function seededOrganization() {
  const owner = await reportingOwner({ organizationName: `Report Firm ${Math.random().toString(16).slice(2, 8)}` });
  const caseA = await createCaseRow(owner.organizationId, { name: 'Alpha v. Beta' });
  const caseB = await createCaseRow(owner.organizationId, { name: 'Gamma v. Delta' });
  await insertRows(owner.organizationId, [
    {
      caseId: null,
      amountCents: 9_900,
      status: 'paid',
      createdAt: WINDOW_START,
      invoiceId: 'in_base',
      skuKey: 'platform_base_fee_tier2_monthly',
    },
    { caseId: caseA.id, amountCents: 1_000, status: 'paid', createdAt: inWindow(1), invoiceId: 'in_a1' },
    { caseId: caseA.id, amountCents: 2_000, status: 'INVOICED', createdAt: inWindow(2), invoiceId: 'in_a2' },
    { caseId: caseA.id, amountCents: 300, status: 'processing', createdAt: inWindow(3) },
    { caseId: caseA.id, amountCents: 14_900, status: 'plan_included', createdAt: inWindow(4) },
    { caseId: caseA.id, amountCents: 500, status: 'waived', createdAt: inWindow(5) },
    { caseId: caseA.id, amountCents: 700, status: 'voided', createdAt: inWindow(6) },
    { caseId: caseA.id, amountCents: 800, status: 'failed', createdAt: inWindow(7), invoiceId: 'in_a7' },
    { caseId: caseA.id, amountCents: 900, status: 'refunded', createdAt: inWindow(8), invoiceId: 'in_a8' },
    { caseId: caseB.id, amountCents: 14_900, status: 'paid', createdAt: inWindow(9), invoiceId: 'in_b1' },
    { caseId: null, amountCents: 100_000, status: 'paid', createdAt: WINDOW_END },
    // Outside the window by one millisecond on either side.
    { caseId: caseA.id, amountCents: 77_777, status: 'paid', createdAt: new Date(WINDOW_START.getTime() - 1) },
    { caseId: null, amountCents: 88_888, status: 'paid', createdAt: new Date(WINDOW_END.getTime() + 1) },
  ]);
  const other = await createUser();
  await insertRows(other.organizationId, [{ amountCents: 55_555, createdAt: inWindow(10) }]);
  return { owner, caseA, caseB };
}

describe('POST /billing/report', () => {
  describeSecurity(routes.createBillingReport, {
    request: () => ({ body: { format: 'json' } }),
    succeeds: true,
    setup: (owner) => onTierWithoutCharges(owner.organizationId, 'tier3'),
  });

  it('answers the JSON report over a window: sections per case and organization, totals to the cent', async () => {
    const { owner, caseA, caseB } = await seededOrganization();

    const data = expectData(await report(owner, { format: 'json', ...window }));

    expect(data.grandTotalChargedCents).toBe(128_100);
    expect(data.organizations).toHaveLength(1);
    const [section] = data.organizations;
    expect(section).toMatchObject({
      organizationId: owner.organizationId,
      organizationName: expect.stringMatching(/^Report Firm /),
      tier: 'tier3',
      billingMode: 'pay_as_you_go',
      onCaseBilling: true,
      window,
      totalChargedCents: 128_100,
      totalInformationalCents: 14_900,
      totalNonChargeableCents: 1_200,
      totalFailedCents: 800,
      totalRefundedCents: 900,
    });
    expect(
      section.cases.map((c: any) => [
        c.caseId,
        c.caseName,
        c.subtotalChargedCents,
        c.subtotalInformationalCents,
        c.rows.length,
      ]),
    ).toEqual([
      ['organization', 'Organization-wide charges', 109_900, 0, 2],
      [caseA.id, 'Alpha v. Beta', 3_300, 14_900, 8],
      [caseB.id, 'Gamma v. Delta', 14_900, 0, 1],
    ]);
    const alpha = section.cases[1];
    expect(alpha.rows.map((r: any) => r.status)).toEqual([
      'paid',
      'INVOICED',
      'processing',
      'plan_included',
      'waived',
      'voided',
      'failed',
      'refunded',
    ]);
    expect(alpha.rows[0]).toEqual({
      date: inWindow(1).toISOString(),
      skuKey: 'case_pro_upgrade',
      description: 'Seeded paid 1000',
      quantity: 1,
      unitAmountCents: 1_000,
      amountCents: 1_000,
      status: 'paid',
      invoiceId: 'in_a1',
    });
    expect(alpha.rows[2]).not.toHaveProperty('invoiceId');
    expect(JSON.stringify(data)).not.toMatch(/77777|88888|55555/);
  });

  it('limits the report to some cases', async () => {
    const { owner, caseA, caseB } = await seededOrganization();

    const onlyB = expectData(await report(owner, { format: 'json', ...window, caseIds: [caseB.id] }));
    const both = expectData(await report(owner, { format: 'json', ...window, caseIds: [caseA.id, caseB.id] }));

    expect(onlyB.organizations[0].cases.map((c: any) => c.caseId)).toEqual([caseB.id]);
    expect(onlyB.organizations[0]).toMatchObject({
      totalChargedCents: 14_900,
      totalInformationalCents: 0,
      totalNonChargeableCents: 0,
      totalFailedCents: 0,
      totalRefundedCents: 0,
    });
    expect(onlyB.grandTotalChargedCents).toBe(14_900);
    expect(both.organizations[0].cases.map((c: any) => c.caseId)).toEqual([caseA.id, caseB.id]);
    expect(both.organizations[0]).toMatchObject({
      totalChargedCents: 18_200,
      totalInformationalCents: 14_900,
      totalNonChargeableCents: 1_200,
      totalFailedCents: 800,
      totalRefundedCents: 900,
    });
  });

  it('a case of another organization in caseIds adds nothing', async () => {
    const { owner, caseB } = await seededOrganization();
    const stranger = await createUser();
    const foreign = await createCaseRow(stranger.organizationId);
    await insertRows(stranger.organizationId, [{ caseId: foreign.id, amountCents: 66_666, createdAt: inWindow(3) }]);

    const data = expectData(await report(owner, { format: 'json', ...window, caseIds: [caseB.id, foreign.id] }));

    expect(data.organizations[0].cases.map((c: any) => c.caseId)).toEqual([caseB.id]);
    expect(data.grandTotalChargedCents).toBe(14_900);
  });

  it('defaults the window to the first of the month up to now for an organization without a billing period', async () => {
    const owner = await reportingOwner();
    testClock.freeze();
    const at = now();
    const monthStart = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
    await insertRows(owner.organizationId, [
      { amountCents: 1_000, createdAt: monthStart },
      { amountCents: 2_000, createdAt: new Date(monthStart.getTime() - 1) },
      { amountCents: 4_000, createdAt: addSeconds(at, 1) },
    ]);

    const data = expectData(await report(owner, { format: 'json' }));

    expect(data.organizations[0].window).toEqual({ startDate: monthStart.toISOString(), endDate: at.toISOString() });
    expect(data.grandTotalChargedCents).toBe(1_000);
  });

  it('defaults the window to the current billing period up to now once a plan is selected', async () => {
    const owner = await createUser();
    testClock.freeze();
    const start = now();
    await putOnPlan(owner, 'tier3');
    testClock.advance(120);
    await insertRows(owner.organizationId, [{ amountCents: 3_000, createdAt: addSeconds(start, -1) }]);

    const data = expectData(await report(owner, { format: 'json' }));

    const [section] = data.organizations;
    expect(section).toMatchObject({ tier: 'tier3', billingMode: 'pay_as_you_go', onCaseBilling: true });
    expect(section.window).toEqual({ startDate: start.toISOString(), endDate: addSeconds(start, 120).toISOString() });
    expect(section.totalChargedCents).toBe(19_900);
  });

  it('answers 400 VALIDATION_FAILED naming body.startDate when startDate is after endDate', async () => {
    const owner = await reportingOwner();

    const result = await report(owner, {
      format: 'json',
      startDate: '2026-03-02T00:00:00.000Z',
      endDate: '2026-03-01T00:00:00.000Z',
    });

    expectError(result, 400, 'VALIDATION_FAILED', ['body.startDate']);
    expect(result.body.error.message).toMatch(/startDate/);
  });

  it('answers 400 VALIDATION_FAILED naming the date sent when the defaulted bound makes the window empty', async () => {
    const owner = await reportingOwner();
    const future = addSeconds(now(), 3_600).toISOString();

    expectError(await report(owner, { format: 'json', startDate: future }), 400, 'VALIDATION_FAILED', [
      'body.startDate',
    ]);
    expectError(
      await report(owner, { format: 'json', endDate: '2000-01-01T00:00:00.000Z' }),
      400,
      'VALIDATION_FAILED',
      ['body.endDate'],
    );
  });

  it('accepts a window of a single instant (startDate equal to endDate)', async () => {
    const owner = await reportingOwner();
    await insertRows(owner.organizationId, [{ amountCents: 1_500, createdAt: WINDOW_START }]);

    const data = expectData(
      await report(owner, {
        format: 'json',
        startDate: WINDOW_START.toISOString(),
        endDate: WINDOW_START.toISOString(),
      }),
    );

    expect(data.grandTotalChargedCents).toBe(1_500);
  });

  it('answers 400 over 50,000 rows; exactly 50,000 rows, or the window narrowed by caseIds, is served', async () => {
    const owner = await reportingOwner();
    const busy = await createCaseRow(owner.organizationId);
    const quiet = await createCaseRow(owner.organizationId);
    await db().execute(sql`
      insert into billing_rows (id, organization_id, case_id, sku_key, description, quantity, unit_amount_cents, amount_cents, status, informational, idempotency_key, charge_key, created_at, updated_at)
      select gen_random_uuid(), ${owner.organizationId}::uuid, ${busy.id}::uuid, 'case_pro_upgrade', 'Bulk ' || n, 1, 1, 1, 'paid', false,
             'bulk:' || ${owner.organizationId} || ':' || n || ':0', 'bulk:' || ${owner.organizationId} || ':' || n,
             ${WINDOW_START.toISOString()}::timestamptz + (n || ' milliseconds')::interval, now()
      from generate_series(1, ${MAX_REPORT_ROWS + 1}) n`);
    await insertRows(owner.organizationId, [{ caseId: quiet.id, amountCents: 2_500, createdAt: inWindow(5) }]);

    const tooLarge = await report(owner, { format: 'json', ...window });
    const narrowed = expectData(await report(owner, { format: 'json', ...window, caseIds: [quiet.id] }));

    expectError(tooLarge, 400, 'REPORT_TOO_LARGE');
    expect(tooLarge.body.error.message).toContain(`${MAX_REPORT_ROWS + 2} rows`);
    expect(narrowed.grandTotalChargedCents).toBe(2_500);
    // Over the limit in PDF too.
    expectError(await report(owner, { format: 'pdf', ...window }), 400, 'REPORT_TOO_LARGE');
    // Exactly 50,000 rows (bulk rows 2..50,001) is still served.
    const atLimit = {
      startDate: new Date(WINDOW_START.getTime() + 2).toISOString(),
      endDate: new Date(WINDOW_START.getTime() + MAX_REPORT_ROWS + 1).toISOString(),
    };
    // Sent compressed, as to any client that accepts it: plain, 50,000 rows are over Lambda's 6 MB
    // (test/local/large-answers.test.ts follows the 303 such a client gets).
    const full = expectData(
      await invoke(routes.createBillingReport, {
        ...as(owner),
        body: { format: 'json', ...atLimit },
        headers: { 'accept-encoding': 'gzip' },
      }),
    );
    expect(full.grandTotalChargedCents).toBe(MAX_REPORT_ROWS);
    expect(full.organizations[0].cases[0].rows).toHaveLength(MAX_REPORT_ROWS);
  });

  it('answers 404 NOT_FOUND while billing reports are off', async () => {
    const owner = await reportingOwner();
    const restore = overrideConfig({ FEATURE_BILLING_REPORTS: false });
    try {
      const result = await report(owner, { format: 'json' });
      expectError(result, 404, 'NOT_FOUND');
      expect(result.body.data).toBeUndefined();
      expectError(await report(owner, { format: 'pdf' }), 404, 'NOT_FOUND');
    } finally {
      restore();
    }
    expect(expectData(await report(owner, { format: 'json' })).organizations).toHaveLength(1);
  });

  it('writes a PDF of many pages with the sections, rows and totals of the JSON report', async () => {
    // Rows of two cases and the organization interleaved in time, more than one read of the
    // database (the rows are streamed) and many pages; descriptions a PDF string must escape.
    const owner = await reportingOwner();
    const first = await createCaseRow(owner.organizationId, { name: 'First (matter)' });
    const second = await createCaseRow(owner.organizationId, { name: 'Second \\ matter' });
    await db().execute(sql`
      insert into billing_rows (id, organization_id, case_id, sku_key, description, quantity, unit_amount_cents, amount_cents, status, informational, idempotency_key, charge_key, created_at, updated_at)
      select gen_random_uuid(), ${owner.organizationId}::uuid,
             (array[${second.id}::uuid, null, ${first.id}::uuid])[1 + n % 3], 'case_pro_upgrade',
             'Row ' || n || case when n % 500 = 0 then ' (paren) back\\slash caf\u00e9 \u20ac' else '' end,
             1, n, n, (array['paid', 'failed', 'refunded', 'waived'])[1 + n % 4], false,
             'many:' || ${owner.organizationId} || ':' || n, 'many:' || ${owner.organizationId} || ':' || n,
             ${WINDOW_START.toISOString()}::timestamptz + (n || ' seconds')::interval, now()
      from generate_series(1, 4500) n`);

    const json = expectData(await report(owner, { format: 'json', ...window }));
    const pdf = expectData(await report(owner, { format: 'pdf', ...window }));

    const { pages, lines } = await pdfText(readFileSync(join(storageRoot, pdf.storageKey)));
    const [organization] = json.organizations;
    expect(organization.cases.map((c: any) => c.caseId)).toEqual(['organization', first.id, second.id]);
    expect(pages).toBeGreaterThan(80);
    const sections = pdfSections(lines);
    expect(sections.map((section) => section.heading)).toEqual([
      'Organization-wide charges (organization)',
      `First (matter) (${first.id})`,
      `Second \\ matter (${second.id})`,
    ]);
    sections.forEach((section, index) => {
      const expected = organization.cases[index];
      expect(section.rows).toHaveLength(expected.rows.length);
      section.rows.forEach((line, at) => {
        const row = expected.rows[at];
        expect(line.startsWith(`${row.date.slice(0, 10)} ${row.skuKey}`)).toBe(true);
        expect(line).toContain(`${row.description.slice(0, 20)}`);
        expect(line).toContain(` ${formatCents(row.amountCents)} ${row.status}`);
      });
      expect(section.subtotal).toBe(
        `Subtotal charged ${formatCents(expected.subtotalChargedCents)}   Included in plan (list value) ${formatCents(expected.subtotalInformationalCents)}`,
      );
    });
    expect(lines.filter((line) => line.includes('(paren) back\\slash caf\u00e9 ?'))).toHaveLength(9);
    expect(lines.at(-2)).toBe(
      `Total charged ${formatCents(organization.totalChargedCents)}   Informational $0.00   Not chargeable ${formatCents(organization.totalNonChargeableCents)}   Failed ${formatCents(organization.totalFailedCents)}   Refunded ${formatCents(organization.totalRefundedCents)}`,
    );
    expect(lines.at(-1)).toBe(`Grand total charged ${formatCents(json.grandTotalChargedCents)}`);
    expect(pdf.rowCount).toBe(4500);
  });

  it('stores a PDF and answers its file name, type, size and a time-limited download link to it', async () => {
    const { owner, caseA, caseB } = await seededOrganization();
    testClock.freeze();
    const at = now();

    const data = expectData(await report(owner, { format: 'pdf', ...window }));

    expect(data).toEqual({
      fileName: expect.stringMatching(/^billing-report-report-firm-[a-z0-9-]+-2026-03-01-2026-03-31\.pdf$/),
      contentType: 'application/pdf',
      sizeBytes: expect.any(Number),
      storageKey: expect.stringMatching(
        new RegExp(`^generated/organizations/${owner.organizationId}/reports/[0-9a-f-]+/billing-report-.+\\.pdf$`),
      ),
      rowCount: 11,
      downloadUrl: expect.stringMatching(new RegExp(`^${publicBaseUrl()}/_local/objects/generated/`)),
      expiresAt: addSeconds(at, 15 * 60).toISOString(),
    });
    const stored = readFileSync(join(storageRoot, data.storageKey));
    expect(stored.byteLength).toBe(data.sizeBytes);
    expect(stored.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(stored.subarray(-6).toString('latin1')).toContain('%%EOF');
    // It reads back: one page, the sections in the JSON report's order, subtotals and totals to the cent.
    const { pages, lines } = await pdfText(stored);
    expect(pages).toBe(1);
    expect(lines[0]).toMatch(/^Billing report: Report Firm /);
    expect(lines[1]).toMatch(
      /^Window 2026-03-01T00:00:00.000Z to 2026-03-31T23:59:59.999Z {3}Tier tier3 {3}Billing pay_as_you_go/,
    );
    expect(pdfSections(lines).map((section) => [section.heading, section.rows.length, section.subtotal])).toEqual([
      [
        'Organization-wide charges (organization)',
        2,
        'Subtotal charged $1,099.00   Included in plan (list value) $0.00',
      ],
      [`Alpha v. Beta (${caseA.id})`, 8, 'Subtotal charged $33.00   Included in plan (list value) $149.00'],
      [`Gamma v. Delta (${caseB.id})`, 1, 'Subtotal charged $149.00   Included in plan (list value) $0.00'],
    ]);
    expect(lines.find((line) => line.includes('in_a1'))).toMatch(
      /^2026-03-01 case_pro_upgrade +Seeded paid 1000 +1 +\$10\.00 +\$10\.00 paid +in_a1 *$/,
    );
    expect(lines.at(-2)).toBe(
      'Total charged $1,281.00   Informational $149.00   Not chargeable $12.00   Failed $8.00   Refunded $9.00',
    );
    expect(lines.at(-1)).toBe('Grand total charged $1,281.00');
    // The link downloads those bytes until it expires.
    const link = new URL(data.downloadUrl);
    const expires = Number(link.searchParams.get('expires'));
    expect(expires).toBe(Math.floor(addSeconds(at, 15 * 60).getTime() / 1000));
    const key = decodeURIComponent(link.pathname.replace('/_local/objects/', ''));
    expect(key).toBe(data.storageKey);
    expect((await storage.readSigned(key, expires, link.searchParams.get('signature')!))?.equals(stored)).toBe(true);
    testClock.advance(15 * 60 + 1);
    expect(await storage.readSigned(key, expires, link.searchParams.get('signature')!)).toBeNull();
    const history = await db()
      .select()
      .from(billingHistory)
      .where(and(eq(billingHistory.organizationId, owner.organizationId), eq(billingHistory.category, 'invoicing')));
    expect(history.map((h) => [h.description, h.createdById])).toEqual([
      ['Billing report (PDF, 11 rows) generated', owner.id],
    ]);
  });

  it('prints a case name of any length bounded, cut with an ellipsis (issue 31)', async () => {
    const owner = await reportingOwner();
    const long = await createCaseRow(owner.organizationId, { name: `Long ${'x'.repeat(300)}` });
    await insertRows(owner.organizationId, [
      { caseId: long.id, amountCents: 100, status: 'paid', createdAt: inWindow(1) },
    ]);

    const pdf = expectData(await report(owner, { format: 'pdf', ...window }));

    const { lines } = await pdfText(readFileSync(join(storageRoot, pdf.storageKey)));
    expect(pdfSections(lines).map((section) => section.heading)).toContain(`Long ${'x'.repeat(112)}... (${long.id})`);
    expect(lines.join('\n')).not.toContain('x'.repeat(120));
  });

  it('stores a PDF for an empty report too', async () => {
    const owner = await reportingOwner();

    const data = expectData(await report(owner, { format: 'pdf' }));

    expect(data.rowCount).toBe(0);
    expect(readFileSync(join(storageRoot, data.storageKey)).subarray(0, 4).toString('latin1')).toBe('%PDF');
  });

  it.each([
    ['a missing format', { ...window }, 'body.format'],
    ['an unknown format', { format: 'csv' }, 'body.format'],
    ['a malformed startDate', { format: 'json', startDate: 'yesterday' }, 'body.startDate'],
    ['a startDate without a time', { format: 'json', startDate: '2026-03-01' }, 'body.startDate'],
    ['a malformed endDate', { format: 'json', endDate: '2026-13-45T99:00:00Z' }, 'body.endDate'],
    ['a caseId over 200 characters', { format: 'json', caseIds: ['c'.repeat(201)] }, 'body.caseIds.0'],
    [
      'caseIds that is not an array',
      { format: 'json', caseIds: '0190c0de-0000-7000-8000-000000000000' },
      'body.caseIds',
    ],
  ])('answers 400 VALIDATION_FAILED for %s', async (_label, body, field) => {
    const owner = await reportingOwner();

    expectError(await report(owner, body), 400, 'VALIDATION_FAILED', [field]);
  });

  it("ignores a field it does not know: organizationIds never widens the report beyond the caller's organization", async () => {
    const { owner } = await seededOrganization();
    const other = await createUser();
    await insertRows(other.organizationId, [{ amountCents: 66_666, createdAt: inWindow(11) }]);

    const data = expectData(
      await report(owner, { format: 'json', ...window, organizationIds: [owner.organizationId, other.organizationId] }),
    );

    expect(data.organizations.map((o: any) => o.organizationId)).toEqual([owner.organizationId]);
    expect(JSON.stringify(data)).not.toMatch(/66666|55555/);
  });
});
