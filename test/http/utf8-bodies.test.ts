import type { Server } from 'node:http';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { buildApiGatewayEvent, buildLambdaContext } from '../../infra/local/apigw-event';
import { loadHandler } from '../../infra/local/router';
import { db } from '../../lib/db/client';
import { cases } from '../../lib/db/schema';
import { LocalMailSink } from '../../lib/mail/transport';
import { expectError, type InvokeResult } from '../harness/invoke';
import { caseWithOwner } from '../harness/cases';

/**
 * Issue 29 (9): a JSON body that is not valid UTF-8 is 400 MALFORMED_JSON, never decoded with
 * U+FFFD in place of the bad bytes and stored. The same answer whether API Gateway delivers the
 * body base64-encoded to the Lambda handler or the local server reads it from the socket.
 */

/** `{"name":"Case <bad bytes>"}`: 0xC3 0x28 is an invalid two-byte sequence, 0xFF is never UTF-8. */
const INVALID = Buffer.concat([Buffer.from('{"name":"Case '), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
const VALID = Buffer.from('{"name":"Café Müller"}');

type Setup = Awaited<ReturnType<typeof caseWithOwner>>;

const headersOf = (s: Setup, contentType: string) => ({
  authorization: `Bearer ${s.owner.accessToken}`,
  organization: s.organizationId,
  'content-type': contentType,
  'user-agent': 'vitest',
});

/** PATCH /cases/{caseId} through the real handler, the body base64-encoded as API Gateway sends binary. */
async function patchBase64(s: Setup, bytes: Buffer, contentType = 'application/json'): Promise<InvokeResult> {
  const route = routes.updateCase;
  const event = buildApiGatewayEvent(
    route,
    { method: route.method, url: `/cases/${s.caseId}`, headers: headersOf(s, contentType), body: 'x' },
    { caseId: s.caseId },
  );
  event.body = bytes.toString('base64');
  event.isBase64Encoded = true;
  const result = await (await loadHandler(route))(event, buildLambdaContext(route));
  return { status: result.statusCode ?? 200, headers: {}, body: result.body ? JSON.parse(result.body) : undefined };
}

const nameOf = async (caseId: string) =>
  (await db().select({ name: cases.name }).from(cases).where(eq(cases.id, caseId)))[0]!.name;

describe('a JSON body that is not UTF-8, through the Lambda handler', () => {
  it.each(['application/json', 'text/plain'])(
    'is 400 MALFORMED_JSON sent as %s; the case is unchanged',
    async (type) => {
      const s = await caseWithOwner();
      const before = await nameOf(s.caseId);
      expectError(await patchBase64(s, INVALID, type), 400, 'MALFORMED_JSON');
      expect(await nameOf(s.caseId)).toBe(before);
    },
  );

  it('still reads a base64 body of valid UTF-8', async () => {
    const s = await caseWithOwner();
    const answer = await patchBase64(s, VALID);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await nameOf(s.caseId)).toBe('Café Müller');
  });
});

describe('a JSON body that is not UTF-8, through the local server', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createLocalServer({ mailSink: new LocalMailSink() });
    base = await listen(server, 0);
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const patch = (s: Setup, bytes: Buffer, type = 'application/json') =>
    fetch(`${base}/cases/${s.caseId}`, { method: 'PATCH', headers: headersOf(s, type), body: bytes });

  it.each(['application/json', 'text/plain'])(
    'is 400 MALFORMED_JSON sent as %s; the case is unchanged',
    async (type) => {
      const s = await caseWithOwner();
      const before = await nameOf(s.caseId);
      const response = await patch(s, INVALID, type);
      const answer = (await response.json()) as { error: { code: string } };
      expect(response.status).toBe(400);
      expect(answer.error.code).toBe('MALFORMED_JSON');
      expect(await nameOf(s.caseId)).toBe(before);
    },
  );

  it('still reads a body of valid UTF-8', async () => {
    const s = await caseWithOwner();
    const response = await patch(s, VALID);
    expect(response.status, await response.text()).toBe(200);
    expect(await nameOf(s.caseId)).toBe('Café Müller');
  });
});
