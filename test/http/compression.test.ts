import { describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { MIN_COMPRESSED_BYTES, negotiateEncoding } from '../../lib/http/compression';
import { caseWithOwner } from '../harness/cases';
import { seedThread } from '../harness/material';
import { expectData, expectError, invoke } from '../harness/invoke';

/** Issue 32: answers compressed as the client's Accept-Encoding allows (lib/http/compression.ts). */

describe('negotiateEncoding', () => {
  it.each([
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate', 'gzip'],
    ['GZIP', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=0.5, br;q=0.4', 'gzip'],
    ['gzip;q=1.0, br;q=1', 'br'],
    ['*', 'br'],
    ['*;q=0.2, br;q=0', 'gzip'],
    ['identity', undefined],
    ['deflate, zstd', undefined],
    ['gzip;q=0', undefined],
    ['', undefined],
  ])('%j -> %s', (header, expected) => {
    expect(negotiateEncoding(header)).toBe(expected);
  });
});

describe('compressed answers', () => {
  it('compresses an answer of a kilobyte or more for a client that accepts it, never a smaller one', async () => {
    const s = await caseWithOwner();
    const { threadId } = await seedThread(
      s.caseId,
      Array.from({ length: 20 }, (_, minute) => ({ minute })),
    );
    const headers = { 'accept-encoding': 'gzip' };
    const page = { token: s.owner.accessToken, path: { caseId: s.caseId, threadId }, query: { perPage: '20' } };
    const small = await invoke(routes.listThreadEmails, page);
    const big = await invoke(routes.listThreadEmails, { ...page, headers });
    const bytes = Buffer.byteLength(JSON.stringify(small.body));
    // The page is over the threshold; this test needs it to be.
    expect(bytes).toBeGreaterThanOrEqual(MIN_COMPRESSED_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(big.headers['content-encoding']).toBe('gzip');
    expect(big.headers.vary).toContain('Accept-Encoding');
    expect(expectData(big).data).toEqual(expectData(small).data);
    const user = s.owner;
    const refused = await invoke(routes.getOrganization, {
      token: user.accessToken,
      path: { orgId: 'unknown' },
      headers,
    });
    expect(Buffer.byteLength(JSON.stringify(refused.body))).toBeLessThan(MIN_COMPRESSED_BYTES);
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.body.error.code).toEqual(expect.any(String));
    expectError(refused, refused.status, refused.body.error.code);
  });
});
