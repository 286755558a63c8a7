/** Helpers the bench parts share: settings from the environment and latency percentiles. */

/** A positive integer setting from the environment, or `fallback` when unset; anything else stops the run. */
export function positiveIntEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

export interface Latency {
  samples: number;
  p50Ms: number;
  p99Ms: number;
}

export const round = (value: number, digits = 1) => Number(value.toFixed(digits));

/** The p-th percentile of ascending `sorted` (nearest rank), 0 when empty. */
export const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

/** p50 and p99 of request times in milliseconds. */
export const latency = (times: number[]): Latency => {
  const sorted = [...times].sort((a, b) => a - b);
  return { samples: sorted.length, p50Ms: round(percentile(sorted, 50), 2), p99Ms: round(percentile(sorted, 99), 2) };
};
