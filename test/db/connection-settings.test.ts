import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../lib/db/client';
import { rawRows } from '../../lib/db/raw-rows';

/**
 * What every pooled server connection runs with, set in its startup packet (no SET statement, which
 * would pin RDS Proxy connections): no JIT, whose compile time (10-40 ms) the API's reads never win back.
 */
describe.skipIf(!process.env.DATABASE_URL)('server connections (PostgreSQL only: PGlite has no JIT)', () => {
  it('run with JIT off', async () => {
    const [row] = await rawRows<{ jit: string }>(db(), sql`show jit`);
    expect(row!.jit).toBe('off');
  });
});
