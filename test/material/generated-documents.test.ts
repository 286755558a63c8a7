import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { generatedDocuments } from '../../lib/db/schema';
import { runMaintenance } from '../../lib/maintenance';
import { signIn } from '../harness/actors';
import { ownDataDir } from '../harness/data-dir';
import { expectData, invoke } from '../harness/invoke';
import { insertRows as insertBillingRows, onTierWithoutCharges } from '../harness/billing';
import { caseWithOwner } from '../harness/cases';
import { importNotesOf } from '../harness/material';

/**
 * Issue 29, item 6: generated documents (custody and billing-report PDFs) live under generated/,
 * are reused while nothing they cover changed, count in the organization's storage while they
 * exist, and are removed by maintenance once they expire (7 days).
 */

const dataDir = ownDataDir('generated-documents-');

type Setup = Awaited<ReturnType<typeof caseWithOwner>>;

const DAY = 86_400;

const custodyPdf = async (s: Setup) =>
  expectData(
    await invoke(routes.getCaseCustody, {
      token: s.owner.accessToken,
      path: { caseId: s.caseId },
      query: { format: 'pdf' },
    }),
  );

const reportPdf = async (s: Setup, body: Record<string, unknown>) =>
  expectData(
    await invoke(routes.createBillingReport, {
      token: s.owner.accessToken,
      organization: s.organizationId,
      body: { format: 'pdf', ...body },
    }),
  );

const storageUsed = async (s: Setup) =>
  expectData(
    await invoke(routes.getOrganizationUsage, { token: s.owner.accessToken, path: { orgId: s.organizationId } }),
  ).storageUsed as number;

/** The files stored below `prefix` (a key prefix ending in '/'), none if the folder is gone. */
const filesUnder = (prefix: string): string[] => {
  const folder = join(dataDir.path, 'objects', ...prefix.split('/').filter(Boolean));
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
};

const importNote = (s: Setup, id: number) => importNotesOf(s, [{ id, title: `Note ${id}` }]);

async function later(s: Setup, seconds: number) {
  testClock.advance(seconds);
  s.owner.accessToken = (await signIn(s.owner)).accessToken;
}

describe('custody PDFs', () => {
  it('stores one object for ten PDFs of an unchanged case, and it counts in storage', async () => {
    // Prepare
    const s = await caseWithOwner();
    expectData(await importNote(s, 1));
    const before = await storageUsed(s);
    // Act
    const answers = [];
    for (let n = 0; n < 10; n += 1) answers.push(await custodyPdf(s));
    // Assess
    const keys = new Set(answers.map((answer) => answer.storageKey));
    expect(keys.size).toBe(1);
    const [key] = [...keys] as string[];
    expect(key).toMatch(new RegExp(`^generated/cases/${s.caseId}/custody/`));
    expect(filesUnder(`generated/cases/${s.caseId}/`)).toHaveLength(1);
    expect(await storageUsed(s)).toBe(before + answers[0].sizeBytes);
  });

  it('makes a new one once what it covers changed; both count until they expire and maintenance removes them', async () => {
    // Prepare
    const s = await caseWithOwner();
    const before = await storageUsed(s);
    const first = await custodyPdf(s);
    expectData(await importNote(s, 1));
    const afterImport = await storageUsed(s);
    // Act
    const second = await custodyPdf(s);
    // Assess
    expect(second.storageKey).not.toBe(first.storageKey);
    expect(second.itemCount).toBe(first.itemCount + 1);
    expect(filesUnder(`generated/cases/${s.caseId}/`)).toHaveLength(2);
    expect(await storageUsed(s)).toBe(afterImport + second.sizeBytes);
    expect(afterImport).toBeGreaterThanOrEqual(before + first.sizeBytes);

    // Act: seven days on, maintenance removes both (object first, then row)
    await later(s, 7 * DAY + 60);
    await runMaintenance();
    // Assess
    expect(filesUnder(`generated/cases/${s.caseId}/`)).toEqual([]);
    expect(
      await db().select().from(generatedDocuments).where(eq(generatedDocuments.organizationId, s.organizationId)),
    ).toEqual([]);
    expect(await storageUsed(s)).toBe(afterImport - first.sizeBytes);
    // A PDF asked for now is made again.
    const third = await custodyPdf(s);
    expect(third.storageKey).not.toBe(second.storageKey);
  });

  it('is not reused once it has expired, even before maintenance removes it', async () => {
    const s = await caseWithOwner();
    const first = await custodyPdf(s);
    await later(s, 7 * DAY + 60);
    const second = await custodyPdf(s);
    expect(second.storageKey).not.toBe(first.storageKey);
  });
});

describe('billing-report PDFs', () => {
  it('reuses the report for the same parameters and billing rows, and makes a new one once a row is added', async () => {
    // Prepare: billing reports come with tier3.
    const s = await caseWithOwner();
    await onTierWithoutCharges(s.organizationId, 'tier3');
    const window = { startDate: '2026-03-01T00:00:00.000Z', endDate: '2026-03-31T23:59:59.999Z' };
    await insertBillingRows(s.organizationId, [{ amountCents: 1_000, createdAt: new Date('2026-03-02T00:00:00Z') }]);
    const before = await storageUsed(s);
    // Act
    const first = await reportPdf(s, window);
    const again = await reportPdf(s, window);
    const otherWindow = await reportPdf(s, { ...window, endDate: '2026-03-30T00:00:00.000Z' });
    // Assess
    expect(again.storageKey).toBe(first.storageKey);
    expect(first.storageKey).toMatch(new RegExp(`^generated/organizations/${s.organizationId}/reports/`));
    expect(otherWindow.storageKey).not.toBe(first.storageKey);
    expect(await storageUsed(s)).toBe(before + first.sizeBytes + otherWindow.sizeBytes);
    // Act: a new billing row in the window
    await insertBillingRows(s.organizationId, [{ amountCents: 500, createdAt: new Date('2026-03-03T00:00:00Z') }]);
    const changed = await reportPdf(s, window);
    // Assess
    expect(changed.storageKey).not.toBe(first.storageKey);
    expect(changed.rowCount).toBe(2);
    expect(filesUnder(`generated/organizations/${s.organizationId}/`)).toHaveLength(3);
  });
});
