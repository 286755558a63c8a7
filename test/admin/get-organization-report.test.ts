import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { testClock } from '../../lib/clock';
import { db } from '../../lib/db/client';
import { devices, extractionAttempts, extractionCodes } from '../../lib/db/schema';
import { hashToken } from '../../lib/secrets';
import { createCaseRow, createUser, updateUserRow } from '../harness/actors';
import { expectData, expectError, invoke } from '../harness/invoke';
import { countQueries } from '../harness/queries';
import { describeSecurity } from '../harness/security';

describe('GET /admin/report/org-report', () => {
  it('lists organizations with their activity figures, computed per organization', async () => {
    testClock.freeze(new Date('2026-11-22T12:00:00Z'));
    const admin = await createUser();
    await updateUserRow(admin.id, { isSuperAdmin: true });
    const firm = await createUser({ organizationName: 'Reported Firm Zeta' });
    const recent = await createCaseRow(firm.organizationId, { name: 'Recent' });
    const old = await createCaseRow(firm.organizationId, { name: 'Old', createdAt: new Date('2026-01-01T00:00:00Z') });
    await createCaseRow(firm.organizationId, { name: 'Deleted', deletedAt: new Date() });
    await db()
      .insert(extractionCodes)
      .values([
        {
          organizationId: firm.organizationId,
          codeHash: hashToken('a'),
          custodianEmail: 'a@x.example',
          caseId: recent.id,
        },
        {
          organizationId: firm.organizationId,
          codeHash: hashToken('b'),
          custodianEmail: 'b@x.example',
          caseId: old.id,
        },
        {
          organizationId: firm.organizationId,
          codeHash: hashToken('c'),
          custodianEmail: 'c@x.example',
          caseId: recent.id,
          usedAt: new Date(),
        },
      ]);
    await db()
      .insert(devices)
      .values([
        { organizationId: firm.organizationId, deviceId: 'd1', deviceType: 'ios' },
        { organizationId: firm.organizationId, deviceId: 'd2', deviceType: 'android' },
      ]);
    await db()
      .insert(extractionAttempts)
      .values([
        { organizationId: firm.organizationId, deviceId: 'd1', outcome: 'success' },
        { organizationId: firm.organizationId, deviceId: 'd1', outcome: 'failed' },
        { organizationId: firm.organizationId, deviceId: 'd1', outcome: 'failed' },
        { organizationId: firm.organizationId, deviceId: 'd2', outcome: 'cancelled' },
      ]);

    const page = expectData(
      await invoke(routes.getOrganizationReport, { token: admin.accessToken, query: { searchText: 'zeta' } }),
    );
    expect(page).toMatchObject({ total: 1, page: 1, perPage: 10 });
    const [entry] = page.data;
    expect(entry.organization).toMatchObject({
      name: 'Reported Firm Zeta',
      activePlan: expect.objectContaining({
        type: 'free',
        seats: 5,
        subscription: expect.objectContaining({ billingMode: 'free' }),
      }),
    });
    expect(entry.otherData).toEqual({
      accountAgeInDays: 0,
      totalCases: 2,
      totalExtractionCodes: 3,
      unusedExtractionCodes: 2,
      totalUniqueDevices: 2,
      unusedExtractionCodesOnRecentCases: 1,
      extractionAttemptsByOutcome: { success: 1, failed: 2, cancelled: 1 },
      extractionAttemptsPerDevice: { average: 2, max: 3 },
    });
    testClock.advance(3 * 86_400);
    const { accessToken } = expectData(
      await invoke(routes.login, { body: { email: admin.email, password: admin.password } }),
    );
    const later = expectData(
      await invoke(routes.getOrganizationReport, { token: accessToken, query: { searchText: firm.email } }),
    );
    expect(later.data[0].otherData.accountAgeInDays).toBe(3);
  });

  it('counts the rows derived from files (row_bytes) in storage, as the plan and the storage stats do', async () => {
    const admin = await createUser();
    await updateUserRow(admin.id, { isSuperAdmin: true });
    const firm = await createUser({ organizationName: `Stored Rows Firm ${Date.now()}` });
    await createCaseRow(firm.organizationId, { name: 'Files and rows', storageBytes: 1_000, rowBytes: 250 });
    await createCaseRow(firm.organizationId, { name: 'Rows only', storageBytes: 0, rowBytes: 40 });

    const page = expectData(
      await invoke(routes.getOrganizationReport, { token: admin.accessToken, query: { searchText: firm.email } }),
    );
    const stats = expectData(
      await invoke(routes.getStorageStats, { token: firm.accessToken, path: { orgId: firm.organizationId } }),
    );

    expect(page.data).toHaveLength(1);
    expect(page.data[0].organization.activePlan).toMatchObject({ storageUsed: 1_290 });
    expect(stats.totalStorage).toBe(1_290);
  });

  it('pages, and answers an empty page when nothing matches', async () => {
    const admin = await createUser();
    await updateUserRow(admin.id, { isSuperAdmin: true });
    await createUser();
    const page = expectData(
      await invoke(routes.getOrganizationReport, { token: admin.accessToken, query: { perPage: '1', page: '1' } }),
    );
    expect(page.data).toHaveLength(1);
    expect(page.total).toBeGreaterThanOrEqual(2);
    expect(page).toMatchObject({ page: 1, perPage: 1, totalPages: page.total, nextPage: 2, previousPage: null });
    const second = expectData(
      await invoke(routes.getOrganizationReport, { token: admin.accessToken, query: { perPage: '1', page: '2' } }),
    );
    expect(second).toMatchObject({ total: page.total, page: 2, previousPage: 1, nextPage: page.total > 2 ? 3 : null });
    expect(second.data[0].organization.id).not.toBe(page.data[0].organization.id);
    const skipped = expectData(
      await invoke(routes.getOrganizationReport, { token: admin.accessToken, query: { skip: '1', limit: '1' } }),
    );
    expect(skipped).toMatchObject({ total: page.total, skip: 1, limit: 1 });
    expect(skipped.data[0].organization.id).toBe(second.data[0].organization.id);
    expect(
      expectData(
        await invoke(routes.getOrganizationReport, {
          token: admin.accessToken,
          query: { searchText: 'no-such-organization-name' },
        }),
      ),
    ).toMatchObject({ total: 0, data: [] });
  });

  it('sends the same number of queries for one organization as for a full page (aggregate SQL, no N+1)', async () => {
    const admin = await createUser();
    await updateUserRow(admin.id, { isSuperAdmin: true });
    const tag = `Counted Firm ${Date.now()}`;
    const firms = [];
    for (let i = 0; i < 4; i += 1) firms.push(await createUser({ organizationName: `${tag} ${i}` }));
    for (const firm of firms) {
      await createCaseRow(firm.organizationId, { name: 'c' });
      await db().insert(devices).values({ organizationId: firm.organizationId, deviceId: 'd', deviceType: 'ios' });
      await db()
        .insert(extractionAttempts)
        .values({ organizationId: firm.organizationId, deviceId: 'd', outcome: 'success' });
    }
    const one = await countQueries(() =>
      invoke(routes.getOrganizationReport, { token: admin.accessToken, query: { searchText: `${tag} 0` } }),
    );
    const four = await countQueries(() =>
      invoke(routes.getOrganizationReport, { token: admin.accessToken, query: { searchText: tag } }),
    );
    expect(expectData(one.result).data).toHaveLength(1);
    expect(expectData(four.result).data).toHaveLength(4);
    expect(one.queries).toBeGreaterThan(3);
    expect(four.queries).toBe(one.queries);
  });

  it('answers 400 naming the field for a searchText Postgres cannot hold, never a 500', async () => {
    const admin = await createUser();
    await updateUserRow(admin.id, { isSuperAdmin: true });
    expectError(
      await invoke(routes.getOrganizationReport, { token: admin.accessToken, query: { searchText: 'ze\u0000ta' } }),
      400,
      'VALIDATION_FAILED',
      ['query.searchText'],
    );
  });

  it('refuses a user who is not a super admin before validating the query', async () => {
    const user = await createUser();
    // Refused before the query is validated.
    expectError(
      await invoke(routes.getOrganizationReport, { token: user.accessToken, query: { perPage: '1000' } }),
      403,
      'FORBIDDEN',
    );
  });
});

describeSecurity(routes.getOrganizationReport, { request: () => ({}), succeeds: true });
