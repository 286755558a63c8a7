import type { Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../functions/routes';
import { createLocalServer, listen, MAX_HEADER_BYTES, MAX_URL_BYTES } from '../../infra/local/app';
import { LocalMailSink } from '../../lib/mail/transport';
import { createUser } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';

/**
 * Issue 13: the local server answers what it refuses itself in the JSON error envelope, never 500:
 * bad percent-encoding 400, an over-long URL 414, over-large headers 431, an over-large body 413.
 */

let server: Server;
let base: string;

beforeAll(async () => {
  server = createLocalServer({ mailSink: new LocalMailSink() });
  base = await listen(server, 0);
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Asserts the error envelope of lib/http/error-envelope.ts: status, code, JSON, a request id. */
async function expectEnvelope(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  const body = (await response.json()) as { requestId: string };
  expect(body).toEqual({
    statusCode: status,
    timestamp: expect.any(String),
    error: { code, message: expect.any(String) },
    requestId: expect.any(String),
  });
  expect(response.headers.get('x-request-id')).toBe(body.requestId);
}

/** Sends raw bytes and reads the whole answer (for requests fetch will not send). */
function sendRaw(payload: string): Promise<string> {
  const { port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(payload));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** Status line and JSON body of a raw HTTP answer. */
function parseRaw(answer: string) {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(head!.split(' ')[1]), head: head!.toLowerCase(), body: JSON.parse(body!) };
}

describe('local server limits', () => {
  it.each([
    ['a truncated UTF-8 sequence', 'GET', '/organization/%E0%A4%A'],
    ['a percent sign without hex digits', 'GET', '/organization/%zz'],
    ['a lone percent sign', 'DELETE', '/auth/tokens/50%'],
  ])('answers 400 BAD_REQUEST in the envelope for a path id with %s', async (_label, method, path) => {
    const owner = await createUser();
    await expectEnvelope(
      await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${owner.accessToken}` } }),
      400,
      'BAD_REQUEST',
    );
  });

  it('still serves well-encoded path ids', async () => {
    const owner = await createUser();
    const response = await fetch(`${base}/organization/${encodeURIComponent(owner.organizationId)}`, {
      headers: { authorization: `Bearer ${owner.accessToken}`, organization: owner.organizationId },
    });
    expect(response.status).toBe(200);
  });

  it('answers 414 URI_TOO_LONG in the envelope for a URL over the limit, even one longer than Node parses by default', async () => {
    await expectEnvelope(await fetch(`${base}/health?q=${'a'.repeat(MAX_URL_BYTES)}`), 414, 'URI_TOO_LONG');
    await expectEnvelope(await fetch(`${base}/organization/${'a'.repeat(100_000)}`), 414, 'URI_TOO_LONG');
    expect((await fetch(`${base}/health?q=${'a'.repeat(MAX_URL_BYTES - 100)}`)).status).toBe(200);
  });

  it('answers 431 HEADERS_TOO_LARGE in the envelope for one large header and for many headers', async () => {
    await expectEnvelope(
      await fetch(`${base}/health`, { headers: { 'x-big': 'b'.repeat(MAX_HEADER_BYTES) } }),
      431,
      'HEADERS_TOO_LARGE',
    );
    const many = Object.fromEntries(Array.from({ length: 800 }, (_, i) => [`x-header-${i}`, 'value']));
    await expectEnvelope(await fetch(`${base}/health`, { headers: many }), 431, 'HEADERS_TOO_LARGE');
    expect((await fetch(`${base}/health`, { headers: { 'x-big': 'b'.repeat(MAX_HEADER_BYTES / 2) } })).status).toBe(
      200,
    );
  });

  it("answers 431 in the envelope, not Node's bare text, when the headers overflow the HTTP parser itself", async () => {
    const answer = parseRaw(
      await sendRaw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(1_100_000)}\r\n\r\n`),
    );
    expect(answer.status).toBe(431);
    expect(answer.head).toContain('content-type: application/json');
    expect(answer.body).toMatchObject({
      statusCode: 431,
      error: { code: 'HEADERS_TOO_LARGE' },
      requestId: expect.any(String),
    });
  });

  it('answers 400 in the envelope for a request that is not HTTP', async () => {
    const answer = parseRaw(await sendRaw('NOT HTTP AT ALL\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      statusCode: 400,
      error: { code: 'BAD_REQUEST' },
      requestId: expect.any(String),
    });
  });

  it('answers 413 PAYLOAD_TOO_LARGE in the envelope for an API body over 6 MB', async () => {
    const response = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(6 * 1024 * 1024 + 1),
    });
    await expectEnvelope(response, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('bounds the sandbox card form: 413 in the envelope for a form body over 10 kB, and no card saved', async () => {
    // Prepare: a plan selected without a card, so a set-up page exists
    const owner = await createUser();
    const body = {
      tier: 'tier2',
      successUrl: 'https://app.example.test/done',
      cancelUrl: 'https://app.example.test/cancel',
    };
    const selected = expectData(
      await invoke(routes.selectPlan, { token: owner.accessToken, organization: owner.organizationId, body }),
    );
    const complete = `${base}${new URL(selected.setupSessionUrl).pathname}/complete`;
    // Act
    const tooLarge = await fetch(complete, {
      method: 'POST',
      body: new URLSearchParams({ cardNumber: '4242 4242 4242 4242', padding: 'p'.repeat(20_000) }),
      redirect: 'manual',
    });
    // Assess: refused, and the session is still open (the normal form then completes it)
    await expectEnvelope(tooLarge, 413, 'PAYLOAD_TOO_LARGE');
    const saved = await fetch(complete, {
      method: 'POST',
      body: new URLSearchParams({ cardNumber: '4242 4242 4242 4242' }),
      redirect: 'manual',
    });
    expect(saved.status).toBe(303);
  });
});
