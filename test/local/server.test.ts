import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalServer, listen } from '../../infra/local/app';
import { LocalMailSink, useMailTransport } from '../../lib/mail/transport';
import { routes } from '../../functions/routes';
import { createUser, uniqueEmail } from '../harness/actors';
import { expectData, invoke } from '../harness/invoke';

let server: Server;
let base: string;
const sink = new LocalMailSink();

beforeAll(async () => {
  useMailTransport(sink);
  server = createLocalServer({ mailSink: sink });
  base = await listen(server, 0);
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('local server', () => {
  it('answers GET /health', async () => {
    const response = await fetch(`${base}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('serves the routes over HTTP end to end: register, profile, and the mail at /_dev/emails', async () => {
    const email = uniqueEmail('http');
    const registered = await post('/auth/register', {
      name: 'Http Person',
      email,
      password: 'http-password',
      acceptTerms: true,
    });
    expect(registered.status).toBe(200);
    expect(registered.headers.get('x-request-id')).toBeTruthy();
    const { data } = (await registered.json()) as { data: { accessToken: string } };

    const profile = await fetch(`${base}/user/profile`, { headers: { authorization: `Bearer ${data.accessToken}` } });
    expect(profile.status).toBe(200);
    expect(((await profile.json()) as { data: { email: string } }).data.email).toBe(email);

    const mail = (await (await fetch(`${base}/_dev/emails`)).json()) as {
      data: Array<{ to: string; subject: string; text: string; html: string; sentAt: string }>;
    };
    const verification = mail.data.find((m) => m.to === email);
    expect(verification).toMatchObject({
      subject: 'Verify your email address',
      text: expect.stringContaining('token=cebs_ev_'),
    });
    expect(Date.parse(verification!.sentAt)).not.toBeNaN();
  });

  it('passes path parameters and query strings through to the handler', async () => {
    const response = await fetch(`${base}/auth/tokens/not-a-uuid`, {
      method: 'DELETE',
      headers: { authorization: 'Bearer nope' },
    });
    expect(response.status).toBe(401);
  });

  it('answers 404 for an unknown path and 405 for a known path with another method', async () => {
    const missing = await fetch(`${base}/nowhere`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'ROUTE_NOT_FOUND' } });
    const wrongMethod = await fetch(`${base}/auth/login`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
  });

  it('serves the sandbox card set-up page and the hosted invoice page the billing rows link to', async () => {
    // Prepare: a plan selected without a card (an open base-fee invoice and a set-up link)
    const owner = await createUser();
    const as = { token: owner.accessToken, organization: owner.organizationId };
    const urls = { successUrl: 'https://app.example.test/done', cancelUrl: 'https://app.example.test/cancel' };
    const selected = expectData(await invoke(routes.selectPlan, { ...as, body: { tier: 'tier2', ...urls } }));
    const setupPath = new URL(selected.setupSessionUrl).pathname;
    // Act: open the set-up page, save a card as its form does, then open the invoice link
    expect(await (await fetch(`${base}${setupPath}`)).text()).toContain('Save a card (sandbox)');
    const saved = await fetch(`${base}${setupPath}/complete`, {
      method: 'POST',
      body: new URLSearchParams({ cardNumber: '4242 4242 4242 4242' }),
      redirect: 'manual',
    });
    const [row] = expectData(await invoke(routes.getReconciliation, as)).groups[0].rows;
    const invoicePage = await fetch(`${base}${new URL(row.hostedInvoiceUrl).pathname}`);
    // Assess
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(urls.successUrl);
    expect(invoicePage.status).toBe(200);
    const html = await invoicePage.text();
    expect(html).toContain(row.processorInvoiceId);
    expect(html).toContain('$99.00');
    expect(html).toContain('status <strong>paid</strong>');
    expect((await fetch(`${base}/_sandbox/invoices/in_sandbox_unknown`)).status).toBe(404);
  });

  it('answers a CORS preflight', async () => {
    const response = await fetch(`${base}/auth/login`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.test' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-headers')).toContain('organization');
  });

  it('refuses a body over 6 MB with 413', async () => {
    const response = await fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(6 * 1024 * 1024 + 1),
    });
    expect(response.status).toBe(413);
  });
});
