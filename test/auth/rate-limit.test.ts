import { describe, expect, it } from 'vitest';
import { testClock } from '../../lib/clock';
import {
  consumeRateLimit,
  currentRateLimitCount,
  pruneRateLimitCounters,
  resetRateLimit,
  uncountRateLimit,
  addressGroup,
} from '../../lib/rate-limit';

/** lib/rate-limit: clock-aligned windows of any length up to a day, counted in Postgres. */

const T0 = new Date('2026-11-22T10:05:00.000Z');
let n = 0;
const uniqueKey = (name: string) => {
  n += 1;
  return `test:${name}:${n}:${process.pid}`;
};

describe('lib/rate-limit', () => {
  it('allows `limit` events in a window, refuses the next with the seconds to the window end, and allows again in the next window', async () => {
    testClock.freeze(T0);
    const rule = { key: uniqueKey('quarter'), limit: 2, windowSeconds: 15 * 60 };
    expect((await consumeRateLimit([rule])).allowed).toBe(true);
    expect((await consumeRateLimit([rule])).allowed).toBe(true);
    const refused = await consumeRateLimit([rule]);
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 10 * 60 });
    testClock.advance(10 * 60);
    expect((await consumeRateLimit([rule])).allowed).toBe(true);
  });

  it('defaults to one-minute windows, and refuses when any of several rules is over', async () => {
    testClock.freeze(T0);
    const tight = { key: uniqueKey('tight'), limit: 1 };
    const loose = { key: uniqueKey('loose'), limit: 100, windowSeconds: 3600 };
    expect((await consumeRateLimit([tight, loose])).allowed).toBe(true);
    expect(await consumeRateLimit([tight, loose])).toMatchObject({ allowed: false, retryAfterSeconds: 60 });
    expect(await currentRateLimitCount(loose)).toBe(2);
  });

  it('gives back counted events, and resets a key', async () => {
    testClock.freeze(T0);
    const rule = { key: uniqueKey('undo'), limit: 1, windowSeconds: 900 };
    const first = await consumeRateLimit([rule]);
    await uncountRateLimit(first.counted);
    expect(await currentRateLimitCount(rule)).toBe(0);
    expect((await consumeRateLimit([rule])).allowed).toBe(true);
    expect((await consumeRateLimit([rule])).allowed).toBe(false);
    await resetRateLimit([rule.key]);
    expect(await currentRateLimitCount(rule)).toBe(0);
    expect((await consumeRateLimit([rule])).allowed).toBe(true);
  });

  it('pruning keeps an hour-long window for its whole hour (and longer ones up to a day)', async () => {
    testClock.freeze(new Date('2026-11-22T10:00:00.000Z'));
    const hourly = { key: uniqueKey('hour'), limit: 3, windowSeconds: 3600 };
    for (let i = 0; i < 3; i += 1) await consumeRateLimit([hourly]);
    testClock.advance(3599);
    await pruneRateLimitCounters();
    expect(await currentRateLimitCount(hourly)).toBe(3);
    expect((await consumeRateLimit([hourly])).allowed).toBe(false);
    const daily = { key: uniqueKey('day'), limit: 1, windowSeconds: 86_400 };
    testClock.freeze(new Date('2026-11-23T00:00:00.000Z'));
    await consumeRateLimit([daily]);
    testClock.advance(86_399);
    await pruneRateLimitCounters();
    expect(await currentRateLimitCount(daily)).toBe(1);
  });
});

describe('addressGroup: the client a per-address limit counts', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    [' 192.0.2.7 ', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['::ffff:c000:207', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2::99', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['2001:db8:1:2::192.0.2.1', '2001:db8:1:2::/64'],
    ['unknown', 'unknown'],
    ['', 'unknown'],
    [null, 'unknown'],
  ])('groups %j as %j', (ip, group) => {
    expect(addressGroup(ip)).toBe(group);
  });

  it('tells two /64s apart, and keeps every IPv4 address apart', () => {
    expect(addressGroup('2001:db8:1:2::1')).not.toBe(addressGroup('2001:db8:1:3::1'));
    expect(addressGroup('192.0.2.1')).not.toBe(addressGroup('192.0.2.2'));
  });
});
