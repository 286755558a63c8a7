import { describe, expect, it } from 'vitest';
import { deepFreeze, isDeeplyFrozen } from '../../lib/frozen';
import { exceedsLambdaPayload, LAMBDA_PAYLOAD_BYTES, serializedBytes } from '../../lib/http/payload-limits';

/**
 * exceedsLambdaPayload decides from a length bound first and serializes only a value that may be
 * over: its verdict must be serializedBytes(value) > LAMBDA_PAYLOAD_BYTES's, for every kind of text.
 */
describe('exceedsLambdaPayload', () => {
  const near = (unit: string, bytesEach: number, delta: number) =>
    unit.repeat(Math.floor((LAMBDA_PAYLOAD_BYTES - 20) / bytesEach) + delta);
  const cases: Array<[string, unknown]> = [
    ['a small answer', { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"data":1}' }],
    ['ASCII just under', { body: near('a', 1, 0) }],
    ['ASCII just over', { body: near('a', 1, 40) }],
    ['three-byte characters just under', { body: near('\u20ac', 3, 0) }],
    ['three-byte characters just over', { body: near('\u20ac', 3, 20) }],
    ['control characters escaped to six bytes, under', { body: near('\u001f', 6, 0) }],
    ['control characters escaped to six bytes, over', { body: near('\u001f', 6, 10) }],
    ['surrogate pairs over', { body: near('\u{1F600}', 4, 20) }],
    ['many small keys over', Object.fromEntries(Array.from({ length: 700_000 }, (_, i) => [`k${i}`, i]))],
    ['a Date (toJSON)', { at: new Date(0), body: near('a', 1, 40) }],
  ];
  it.each(cases)('%s: the same verdict as serializing', (_name, value) => {
    expect(exceedsLambdaPayload(value)).toBe(serializedBytes(value) > LAMBDA_PAYLOAD_BYTES);
  });
});

describe('deepFreeze', () => {
  it('records a value of plain objects and arrays as deeply frozen, and freezes it', () => {
    const value = deepFreeze({ a: [1, { b: 'c' }], d: null });
    expect(isDeeplyFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.a[1])).toBe(true);
    expect(() => {
      (value.a as unknown[]).push(2);
    }).toThrow(TypeError);
  });

  it('does not record a value holding something freezing cannot make unchangeable', () => {
    expect(isDeeplyFrozen(deepFreeze({ at: new Date(0) }))).toBe(false);
    expect(isDeeplyFrozen(deepFreeze({ map: new Map() }))).toBe(false);
    expect(isDeeplyFrozen({ a: 1 })).toBe(false);
  });
});
