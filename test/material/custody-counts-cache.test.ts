import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { db } from '../../lib/db/client';
import { COUNTS_CACHE_CASES, cachedCustodyCountCases, custodySummary } from '../../lib/material/custody';

/**
 * The custody record keeps each case's item and event counts per process (lib/material/custody.ts)
 * for at most COUNTS_CACHE_CASES cases: a warm process that reads the custody of more cases than
 * that keeps a bounded cache (issue 36).
 */
describe('custody counts cache bound', () => {
  it('keeps the counts of at most COUNTS_CACHE_CASES cases', async () => {
    // Prepare: cases without evidence count 0 items; one organization is enough
    const organizationId = randomUUID();
    const caseIds = Array.from({ length: COUNTS_CACHE_CASES + 20 }, () => randomUUID());

    // Act: past the bound
    for (const caseId of caseIds) {
      const summary = await custodySummary(db(), caseId, organizationId);
      expect(summary.itemCount).toBe(0);
    }

    // Assert
    expect(cachedCustodyCountCases()).toBe(COUNTS_CACHE_CASES);
  });
});
