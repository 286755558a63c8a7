import { existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeList, routes } from '../../functions/routes';
import { createLocalServer, listen } from '../../infra/local/app';
import { mailSink } from '../harness/setup';

/**
 * The reference page at GET /docs, opened in headless Chromium (Debian's chromium driven by
 * playwright-core): it lists every route of the route table, loads nothing from outside this
 * machine, and a request can be tried from it. Screenshots for a person to look at are written to
 * test/contract/artifacts/ (docs.png, docs-try.png).
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, 'artifacts');
// CI installs chromium (.ci/run); elsewhere a machine without it skips this file rather than fail.
const available = existsSync(CHROMIUM) || Boolean(process.env.CI);

let server: Server;
let base: string;
let browser: Browser;
let page: Page;
const outside: string[] = [];
const received: string[] = [];

beforeAll(async () => {
  if (!available) return;
  server = createLocalServer({ mailSink });
  server.on('request', (req) => received.push(`${req.method} ${req.url}`));
  base = await listen(server, 0);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  // Nothing may come from a CDN or any other host: record and refuse it.
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(base) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    outside.push(url);
    return route.abort();
  });
  mkdirSync(ARTIFACTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe.skipIf(!available)('GET /docs, the API reference page', () => {
  it('lists every route of the route table, with nothing loaded from outside', async () => {
    // Act
    const response = await page.goto(`${base}/docs`);
    expect(response?.status()).toBe(200);
    await page.getByText(routeList.at(-1)!.path, { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'docs.png') });
    // Assess
    // biome-ignore lint/performance/useDomNodeTextContent: a Playwright locator, not a DOM node; innerText is what a reader sees.
    const text = await page.locator('body').innerText();
    const missing = routeList
      .filter((route) => !text.includes(route.path) || !text.includes(route.summary))
      .map((r) => `${r.method} ${r.path} (${r.summary})`);
    expect(missing, 'routes the page does not list').toEqual([]);
    expect(text).toContain('Case Evidence and Billing Service API');
    expect(outside, 'requests to other hosts').toEqual([]);
  });

  it('sends a request tried from the page to the service and shows the answer', async () => {
    // Prepare: the client panel of one operation that needs no token
    const route = routes.checkEmailAvailability;
    await page.goto(`${base}/docs`);
    await page.getByRole('link', { name: route.summary }).first().click();
    const heading = page.getByRole('heading', { name: route.summary, exact: true });
    await heading.first().waitFor({ timeout: 15_000 });
    await page
      .locator('section')
      .filter({ has: heading })
      .first()
      .getByRole('button', { name: /Test Request/ })
      .click();
    const editor = page.locator('[role="dialog"] .cm-content, .scalar-app .cm-content').first();
    await editor.waitFor({ timeout: 15_000 });
    // Act
    await editor.click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.insertText('{"email": "docs-page-try@example.com"}');
    const answered = page.waitForResponse(
      (r) => new URL(r.url()).pathname === route.path && r.request().method() === route.method,
    );
    await page.keyboard.press('ControlOrMeta+Enter');
    const answer = await answered;
    await page
      .getByText(/200\s*OK/)
      .first()
      .waitFor({ timeout: 15_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'docs-try.png') });
    // Assess
    expect(received).toContain(`${route.method} ${route.path}`);
    expect(answer.status()).toBe(200);
    expect(JSON.parse(answer.request().postData() ?? '{}')).toEqual({ email: 'docs-page-try@example.com' });
    expect(await answer.json()).toMatchObject({ data: { isAvailable: true }, statusCode: 200 });
    expect(outside, 'requests to other hosts').toEqual([]);
  });

  it('serves the description at GET /openapi.json with this server as its server', async () => {
    const response = await fetch(`${base}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      servers: Array<{ url: string }>;
      paths: Record<string, unknown>;
    };
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.servers).toEqual([{ url: base, description: 'This server' }]);
    expect(Object.keys(document.paths).length).toBe(new Set(routeList.map((r) => r.path)).size);
  });
});
