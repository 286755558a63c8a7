import { lt, sql } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db } from '../db/client';
import { rateLimitCounters } from '../db/schema';

const WINDOW_SECONDS = 60;

export interface RateLimitVerdict {
  allowed: boolean;
  retryAfterSeconds: number;
}

/**
 * Counts one request against every key (client IP, user) in the current one-minute window, in a
 * single upsert, and refuses when any key is over `perMinute`.
 */
export async function consumeRateLimit(keys: string[], perMinute: number): Promise<RateLimitVerdict> {
  const at = now();
  const windowStart = new Date(Math.floor(at.getTime() / (WINDOW_SECONDS * 1000)) * WINDOW_SECONDS * 1000);
  const counts = await db()
    .insert(rateLimitCounters)
    .values(keys.map((key) => ({ key, windowStart, count: 1 })))
    .onConflictDoUpdate({
      target: [rateLimitCounters.key, rateLimitCounters.windowStart],
      set: { count: sql`${rateLimitCounters.count} + 1` },
    })
    .returning({ count: rateLimitCounters.count });
  const highest = Math.max(...counts.map((c) => c.count));
  const retryAfterSeconds = Math.max(1, Math.ceil((addSeconds(windowStart, WINDOW_SECONDS).getTime() - at.getTime()) / 1000));
  return { allowed: highest <= perMinute, retryAfterSeconds };
}

/** Drops windows older than an hour (run by the periodic maintenance job). */
export async function pruneRateLimitCounters(): Promise<void> {
  await db()
    .delete(rateLimitCounters)
    .where(lt(rateLimitCounters.windowStart, addSeconds(now(), -3600)));
}
