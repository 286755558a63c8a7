import { and, eq, gt, inArray, lt, sql } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db } from '../db/client';
import { rateLimitCounters } from '../db/schema/platform';

export { addressGroup } from './address-group';

/**
 * Counters in Postgres (`rate_limit_counters`: key, window start, count), in fixed windows aligned
 * to the clock (a one-minute window starts at :00, a 15-minute one at :00, :15, :30, :45, an hour
 * at the full hour). Every limit names its key, its allowance and its window length.
 */
export interface RateLimitRule {
  key: string;
  /** How many counted events the window allows; the next one is refused. */
  limit: number;
  /** Window length in seconds (60 by default); at most MAX_WINDOW_SECONDS. */
  windowSeconds?: number;
}

export interface RateLimitVerdict {
  allowed: boolean;
  /** Seconds until the refusing window ends (at least 1); for an allowed request, of the first rule. */
  retryAfterSeconds: number;
  /** The windows the event was counted in (for `uncountRateLimit`). */
  counted: CountedEvent[];
}

export interface CountedEvent {
  key: string;
  windowStart: Date;
}

const DEFAULT_WINDOW_SECONDS = 60;
/** The longest window a rule may use; pruning keeps windows at least this long. */
export const MAX_WINDOW_SECONDS = 86_400;

function windowOf(rule: RateLimitRule, at: Date): { key: string; windowStart: Date; limit: number; endsAt: Date } {
  const seconds = rule.windowSeconds ?? DEFAULT_WINDOW_SECONDS;
  if (!(seconds > 0 && seconds <= MAX_WINDOW_SECONDS))
    throw new Error(`rate limit window of ${seconds}s for ${rule.key}`);
  const windowStart = new Date(Math.floor(at.getTime() / (seconds * 1000)) * seconds * 1000);
  return { key: rule.key, windowStart, limit: rule.limit, endsAt: addSeconds(windowStart, seconds) };
}

const secondsUntil = (end: Date, at: Date) => Math.max(1, Math.ceil((end.getTime() - at.getTime()) / 1000));

/** The verdict for counts read or written now: refused when any count is over its rule's limit. */
function verdictOf(windows: ReturnType<typeof windowOf>[], counts: Map<string, number>, at: Date): RateLimitVerdict {
  const counted = windows.map((w) => ({ key: w.key, windowStart: w.windowStart }));
  const refusing = windows.filter((w) => (counts.get(w.key) ?? 0) > w.limit);
  if (refusing.length === 0) return { allowed: true, retryAfterSeconds: secondsUntil(windows[0]!.endsAt, at), counted };
  return { allowed: false, retryAfterSeconds: Math.max(...refusing.map((w) => secondsUntil(w.endsAt, at))), counted };
}

/**
 * Counts one event against every rule's key in its current window, in a single upsert, and refuses
 * when any count is then over its limit. The refused event stays counted unless given back with
 * `uncountRateLimit`. Counting first makes the check atomic: concurrent requests never all slip
 * under the limit together.
 */
export async function consumeRateLimit(rules: RateLimitRule[]): Promise<RateLimitVerdict> {
  const at = now();
  const windows = rules.map((rule) => windowOf(rule, at));
  const rows = await db()
    .insert(rateLimitCounters)
    .values(windows.map((w) => ({ key: w.key, windowStart: w.windowStart, count: 1 })))
    .onConflictDoUpdate({
      target: [rateLimitCounters.key, rateLimitCounters.windowStart],
      set: { count: sql`${rateLimitCounters.count} + 1` },
    })
    .returning({ key: rateLimitCounters.key, count: rateLimitCounters.count });
  return verdictOf(windows, new Map(rows.map((r) => [r.key, r.count])), at);
}

/**
 * Takes back events counted by `consumeRateLimit` (the same windows, even if a new one has begun
 * since): a refused sign-in attempt, or one that turned out not to be a failure.
 */
export async function uncountRateLimit(counted: CountedEvent[]): Promise<void> {
  await Promise.all(
    counted.map((c) =>
      db()
        .update(rateLimitCounters)
        .set({ count: sql`greatest(${rateLimitCounters.count} - 1, 0)` })
        .where(and(eq(rateLimitCounters.key, c.key), eq(rateLimitCounters.windowStart, c.windowStart))),
    ),
  );
}

/** Forgets every window of the keys (a successful sign-in clears its failures). */
export async function resetRateLimit(keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await db().delete(rateLimitCounters).where(inArray(rateLimitCounters.key, keys));
}

/** The count of a key in its current window (tests and the admin look at it). */
export async function currentRateLimitCount(rule: Omit<RateLimitRule, 'limit'>): Promise<number> {
  const w = windowOf({ ...rule, limit: 0 }, now());
  const [row] = await db()
    .select({ count: rateLimitCounters.count })
    .from(rateLimitCounters)
    .where(
      and(
        eq(rateLimitCounters.key, w.key),
        eq(rateLimitCounters.windowStart, w.windowStart),
        gt(rateLimitCounters.count, 0),
      ),
    );
  return row?.count ?? 0;
}

/**
 * Drops windows that started more than MAX_WINDOW_SECONDS ago (run by the periodic maintenance
 * job): every window, up to a day long, survives its whole length.
 */
export async function pruneRateLimitCounters(): Promise<void> {
  await db()
    .delete(rateLimitCounters)
    .where(lt(rateLimitCounters.windowStart, addSeconds(now(), -MAX_WINDOW_SECONDS)));
}
