import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { useSecretReader } from '../../lib/aws/secrets';
import { testClock } from '../../lib/clock';
import { overrideConfig } from '../../lib/config';
import { viewerIp } from '../../lib/http/edge';
import { expectData, expectError, type InvokeOptions, invoke } from '../harness/invoke';

/**
 * Behind the edge (infra/constructs/edge.ts) every request reaches API Gateway from a CloudFront
 * server: the service serves only requests carrying CloudFront's secret x-origin-verify header, and
 * counts an anonymous client's limit per CloudFront-Viewer-Address, not per CloudFront server.
 */

const ORIGIN_VERIFY = randomBytes(32).toString('hex');
/** One CloudFront edge server, the sourceIp API Gateway reports for all its viewers. */
const EDGE_SERVER = '130.176.98.11';

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
  useSecretReader(undefined);
});

const behindEdge = () => {
  restore = overrideConfig({ ORIGIN_VERIFY_SECRET: ORIGIN_VERIFY });
};

/** check-email-availability (10 per minute per anonymous client) as CloudFront forwards it. */
const checkEmail = (headers: Record<string, string>, options: InvokeOptions = {}) =>
  invoke(routes.checkEmailAvailability, {
    body: { email: 'someone@example.com' },
    ip: EDGE_SERVER,
    ...options,
    headers,
  });

const fromViewer = (viewerAddress: string, extra: Record<string, string> = {}) => ({
  'x-origin-verify': ORIGIN_VERIFY,
  'cloudfront-viewer-address': viewerAddress,
  ...extra,
});

describe('origin verification behind CloudFront', () => {
  it.each([
    ['no x-origin-verify header', {}],
    ['an empty one', { 'x-origin-verify': '' }],
    ['a wrong value of the same length', { 'x-origin-verify': randomBytes(32).toString('hex') }],
    ['the value with a suffix', { 'x-origin-verify': `${ORIGIN_VERIFY}x` }],
    ['the value in another header', { 'x-origin-verified': ORIGIN_VERIFY }],
  ])('refuses a request with %s: 403 FORBIDDEN in the error envelope', async (_case, headers) => {
    behindEdge();
    const answer = await checkEmail({ 'cloudfront-viewer-address': '198.51.100.20:41234', ...headers });
    expectError(answer, 403, 'FORBIDDEN');
    expect(answer.headers['x-request-id']).toBe(answer.body.requestId);
  });

  it('serves a request carrying the value, by any header spelling', async () => {
    behindEdge();
    expectData(await checkEmail(fromViewer('198.51.100.21:41234')));
    expectData(
      await checkEmail({ 'X-Origin-Verify': ORIGIN_VERIFY, 'CloudFront-Viewer-Address': '198.51.100.21:41235' }),
    );
  });

  it('reads the value from Secrets Manager at cold start when only its ARN is configured', async () => {
    const reads: string[] = [];
    useSecretReader(async (id) => {
      reads.push(id);
      if (id !== 'arn:origin-verify') throw new Error(`no secret ${id}`);
      return ORIGIN_VERIFY;
    });
    process.env.ORIGIN_VERIFY_SECRET_ARN = 'arn:origin-verify';
    restore = overrideConfig({ ORIGIN_VERIFY_SECRET_ARN: 'arn:origin-verify', ORIGIN_VERIFY_SECRET: undefined });
    try {
      expectError(await checkEmail({ 'cloudfront-viewer-address': '198.51.100.22:1' }), 403, 'FORBIDDEN');
      expectData(await checkEmail(fromViewer('198.51.100.22:2')));
    } finally {
      delete process.env.ORIGIN_VERIFY_SECRET_ARN;
    }
    expect(reads).toEqual(['arn:origin-verify']);
  });

  it('does not check anything when no origin-verify value is configured (local server, tests)', async () => {
    expectData(await checkEmail({}));
    expectData(await checkEmail({ 'x-origin-verify': 'anything' }));
  });
});

describe('client IP behind CloudFront', () => {
  it('counts the per-IP limit per viewer address, not per CloudFront server, and ignores X-Forwarded-For', async () => {
    behindEdge();
    testClock.freeze(new Date('2026-11-22T10:00:05Z'));
    const viewerA = '203.0.113.50';
    const viewerB = '203.0.113.51';
    // Ten from viewer A (new source ports, as new connections have), each through the same edge server.
    for (let port = 50_000; port < 50_010; port += 1) expectData(await checkEmail(fromViewer(`${viewerA}:${port}`)));
    expectError(await checkEmail(fromViewer(`${viewerA}:50010`)), 429, 'RATE_LIMITED');

    // Viewer B behind the same edge server has its own limit.
    expectData(await checkEmail(fromViewer(`${viewerB}:40000`)));
    // A forged X-Forwarded-For (or one CloudFront appended to) does not make viewer A someone else.
    expectError(
      await checkEmail(fromViewer(`${viewerA}:50011`, { 'x-forwarded-for': `${viewerB}, ${EDGE_SERVER}` })),
      429,
      'RATE_LIMITED',
    );
    expectError(
      await checkEmail(fromViewer(`${viewerA}:50012`, { 'x-forwarded-for': '192.0.2.99' })),
      429,
      'RATE_LIMITED',
    );
  });

  it('keys IPv6 viewers on the address without the port, bracketed or not, by their /64', async () => {
    behindEdge();
    testClock.freeze(new Date('2026-11-22T11:00:05Z'));
    for (let i = 0; i < 5; i += 1) expectData(await checkEmail(fromViewer(`2001:db8:1::7:${40_000 + i}`)));
    for (let i = 5; i < 10; i += 1) expectData(await checkEmail(fromViewer(`[2001:DB8:1::7]:${40_000 + i}`)));
    expectError(await checkEmail(fromViewer('2001:db8:1::7:41000')), 429, 'RATE_LIMITED');
    // Another address of the same /64 is the same client (it picks addresses in it at will).
    expectError(await checkEmail(fromViewer('2001:db8:1::8:41000')), 429, 'RATE_LIMITED');
    expectData(await checkEmail(fromViewer('2001:db8:2::8:41000')));
  });

  it('keys on API Gateway sourceIp when no origin-verify value is configured', async () => {
    testClock.freeze(new Date('2026-11-22T12:00:05Z'));
    for (let i = 0; i < 10; i += 1)
      expectData(await checkEmail({ 'cloudfront-viewer-address': `203.0.113.${60 + i}:1` }, { ip: '198.51.100.90' }));
    expectError(
      await checkEmail({ 'cloudfront-viewer-address': '203.0.113.99:1' }, { ip: '198.51.100.90' }),
      429,
      'RATE_LIMITED',
    );
  });

  it.each([
    ['198.51.100.10:46532', '198.51.100.10'],
    ['198.51.100.10', '198.51.100.10'],
    ['2001:0db8:85a3:0000:0000:8a2e:0370:7334:46532', '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    ['2001:db8::1:443', '2001:db8::1'],
    ['[2001:DB8::1]:443', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['::ffff:198.51.100.10:8080', '::ffff:198.51.100.10'],
    ['', undefined],
    ['not-an-ip:80', undefined],
    ['198.51.100.10:80, 203.0.113.1', undefined],
  ])('reads CloudFront-Viewer-Address %j as %j', (header, ip) => {
    expect(viewerIp(header)).toBe(ip);
  });
});
