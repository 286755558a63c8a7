/**
 * Values frozen all the way down by `deepFreeze`: nothing in them can change any more. Weak: bounded
 * by the values' own lives (the caches that hold them).
 */
const deeplyFrozen = new WeakSet<object>();

/**
 * Freezes `value` and every plain object and array in it, and answers it. Such a value can be
 * shared between requests (a cache's entry) and its serialization kept with it
 * (`isDeeplyFrozen`). A value holding anything else (a Date, a Map, a class instance), which
 * freezing cannot make unchangeable, is frozen as far as it goes but not recorded.
 */
export function deepFreeze<T>(value: T): T {
  freeze(value);
  return value;
}

function freeze(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return typeof value !== 'function';
  if (deeplyFrozen.has(value)) return true;
  const prototype = Object.getPrototypeOf(value);
  let whole = Array.isArray(value) || prototype === Object.prototype || prototype === null;
  for (const key of Object.keys(value)) if (!freeze((value as Record<string, unknown>)[key])) whole = false;
  Object.freeze(value);
  if (whole) deeplyFrozen.add(value);
  return whole;
}

/** Whether `value` went through `deepFreeze` whole: it and everything in it will never change. */
export function isDeeplyFrozen(value: unknown): value is object {
  return value !== null && typeof value === 'object' && deeplyFrozen.has(value);
}
