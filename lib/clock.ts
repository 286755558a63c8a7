/**
 * The one clock of the service. Token expiry, invitation validity, delinquency and rate-limit
 * windows all read it, so tests can move time instead of waiting for it.
 */
let offsetMs = 0;
let frozenAt: number | undefined;

export function now(): Date {
  return new Date(frozenAt ?? Date.now() + offsetMs);
}

export function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}

export function addDays(date: Date, days: number): Date {
  return addSeconds(date, days * 86_400);
}

/** Calendar month later, clamped to the month's last day (Jan 31 -> Feb 28/29). */
export function addMonths(date: Date, months: number): Date {
  const result = new Date(date.getTime());
  const day = result.getUTCDate();
  result.setUTCDate(1);
  result.setUTCMonth(result.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(result.getUTCFullYear(), result.getUTCMonth() + 1, 0)).getUTCDate();
  result.setUTCDate(Math.min(day, lastDay));
  return result;
}

export const testClock = {
  advance(seconds: number): void {
    if (frozenAt !== undefined) frozenAt += seconds * 1000;
    else offsetMs += seconds * 1000;
  },
  freeze(at: Date = now()): void {
    frozenAt = at.getTime();
  },
  reset(): void {
    offsetMs = 0;
    frozenAt = undefined;
  },
};
