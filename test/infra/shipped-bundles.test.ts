import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, brotliDecompressSync, inflateSync } from 'node:zlib';
import { Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { routeList } from '../../functions/routes';
import { type Bundle, bundleOf } from '../../infra/bundle-report';
import { buildApp, cdkJsonContext } from '../../infra/build-app';
import { buildApiGatewayEvent, compileRoutePath } from '../../infra/local/apigw-event';
import { createLocalServer, listen } from '../../infra/local/app';
import type { CaseEvidenceStack } from '../../infra/stack';
import { usePaymentProcessor } from '../../lib/billing/processor';
import { overrideConfig } from '../../lib/config';
import { db } from '../../lib/db/client';
import type { RouteDefinition } from '../../lib/http/route';
import { drainLocalImports } from '../../lib/material/imports/queue';
import { useObjectStorage } from '../../lib/storage';
import { tokenFromEmail } from '../harness/actors';
import { databaseUrl } from '../harness/databases';
import { type S3Emulator, startS3Emulator } from '../harness/s3rver';
import { mailSink } from '../harness/setup';
import {
  DOUBLE_SECRET_KEY,
  DOUBLE_WEBHOOK_SECRET,
  type StripeDouble,
  startStripeDouble,
} from '../harness/stripe-double';
import { sqsDouble } from '../harness/sqs-double';
import { uploadHeaders } from '../harness/uploads';
import { BundleHost } from './bundle-host';

/**
 * CI tests what is shipped (issue 32): one synth of the dev stack with every route, then the same
 * journey twice, through the local server and through the synthesized bundles, each bundle in a
 * warm Node process outside the repository (test/infra/bundle-host.ts) invoked with HTTP API
 * (payload 2.0) events, against this file's PostgreSQL database, s3rver for S3, aws-ses-v2-local
 * for SES, an SQS stand-in feeding the import worker bundle, and the Stripe double. Every step
 * must answer the same status, error code and envelope shape both ways, and every route's bundle
 * answers at least one request. The routes' own tests run through tsx, as before.
 *
 * PGlite: bundles never carry PGlite (test/infra/stack.test.ts), so they need a PostgreSQL server;
 * the PGlite run of the suite skips this file, the PostgreSQL run (DATABASE_URL, as in CI) runs it.
 */

type SesEmulator = (config?: { host?: string; port?: number }) => Promise<Server>;
const startSesEmulator = (createRequire(import.meta.url)('aws-ses-v2-local') as { default: SesEmulator }).default;

const portOf = (server: Server) => (server.address() as AddressInfo).port;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

interface RequestOptions {
  token?: string;
  organization?: string;
  body?: unknown;
}

/** One way to reach the service: the local server, or the shipped bundles. */
interface Client {
  name: string;
  /** Operation ids of the routes that answered. */
  hit: Set<string>;
  send(method: string, path: string, options?: RequestOptions): Promise<Answer>;
  /** The `token=` of the newest email to `address` with `subject` in its subject. */
  tokenFromMail(address: string, subject: string): Promise<string>;
  /** Runs every queued import to its end. */
  runImports(): Promise<void>;
}

/** Routes by specificity, as API Gateway picks them: literal segments before parameters. */
const matchers = routeList
  .map((route) => ({ route, ...compileRoutePath(route.path) }))
  .sort((a, b) => a.params.length - b.params.length);

function matchRoute(method: string, pathname: string): { route: RouteDefinition; params: Record<string, string> } {
  for (const { route, pattern, params } of matchers) {
    if (route.method !== method) continue;
    const match = pattern.exec(pathname);
    if (match)
      return {
        route,
        params: Object.fromEntries(params.map((name, index) => [name, decodeURIComponent(match[index + 1]!)])),
      };
  }
  throw new Error(`no route for ${method} ${pathname}`);
}

/** The JSON shape of a value: types and keys, not values (ids, times and hashes differ between runs). */
function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    const shapes = [...new Set(value.map((item) => JSON.stringify(shapeOf(item))))].sort();
    return { array: shapes.map((shape) => JSON.parse(shape)) };
  }
  if (typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((key) => [key, shapeOf((value as Record<string, unknown>)[key])]),
    );
  return typeof value;
}

const requestHeaders = (options: RequestOptions) => ({
  'user-agent': 'shipped-bundles-test',
  ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
  ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
  ...(options.organization ? { organization: options.organization } : {}),
});

function localClient(base: () => string): Client {
  const hit = new Set<string>();
  return {
    name: 'local server',
    hit,
    async send(method, path, options = {}) {
      hit.add(matchRoute(method, new URL(path, 'http://x').pathname).route.operationId);
      const response = await fetch(`${base()}${path}`, {
        method,
        headers: requestHeaders(options),
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        redirect: 'manual',
      });
      const text = await response.text();
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: text ? JSON.parse(text) : undefined,
      };
    },
    tokenFromMail: async (address, subject) => tokenFromEmail(address, subject),
    runImports: () => drainLocalImports(),
  };
}

/** The body API Gateway hands the client: base64 decoded and decompressed as a client would. */
function responseBody(result: { body?: string; isBase64Encoded?: boolean; headers?: Record<string, unknown> }) {
  if (!result.body) return undefined;
  let bytes = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body);
  const encoding = String(
    Object.entries(result.headers ?? {}).find(([name]) => name.toLowerCase() === 'content-encoding')?.[1] ?? '',
  );
  if (encoding === 'gzip') bytes = gunzipSync(bytes);
  else if (encoding === 'br') bytes = brotliDecompressSync(bytes);
  else if (encoding === 'deflate') bytes = inflateSync(bytes);
  return JSON.parse(bytes.toString('utf8'));
}

describe.skipIf(!process.env.DATABASE_URL)('the shipped bundles (PostgreSQL only: bundles carry no PGlite)', () => {
  let outdir: string;
  let dev: CaseEvidenceStack;
  let bundles: Map<string, Bundle>;
  let workerBundle: Bundle;
  const deploymentVariables = new Map<string, string[]>();
  let host: BundleHost;
  let s3: S3Emulator;
  let ses: Server;
  let sqs: Server;
  let stripe: StripeDouble;
  let server: Server;
  let base = '';
  let dataDir: string;
  const queued: string[] = [];
  let restoreConfig: () => void = () => {};
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    const started = performance.now();
    outdir = mkdtempSync(join(tmpdir(), 'cebs-shipped-synth-'));
    // Bundling happens as the constructs are made: no template is needed here (stack.test.ts checks them).
    const built = buildApp({ environmentNames: ['dev'], outdir, nag: false, context: { ...cdkJsonContext() } });
    dev = built.stacks[0]!;
    bundles = new Map(
      dev.functions
        .filter((deployed) => deployed.route)
        .map((deployed) => [deployed.route!.operationId, bundleOf(deployed.name, deployed.construct)]),
    );
    workerBundle = bundleOf('importWorker', dev.importWorker.function);
    // Variables whose values CloudFormation resolves at deployment (ARNs, the queue's URL) are left
    // out of bundle.environment; the test stands in for the ones it can serve.
    for (const { name, construct } of [
      ...dev.functions,
      { name: 'importWorker', construct: dev.importWorker.function },
    ]) {
      const cfn = construct.function.node.defaultChild as CfnFunction;
      const resolved = Stack.of(construct).resolve(cfn.environment) as { variables?: Record<string, unknown> };
      deploymentVariables.set(name, Object.keys(resolved?.variables ?? {}));
    }
    timings.synthMs = performance.now() - started;
  }, 900_000);

  beforeAll(async () => {
    s3 = await startS3Emulator();
    ses = await startSesEmulator({ host: '127.0.0.1', port: 0 });
    sqs = sqsDouble(queued);
    sqs.listen(0, '127.0.0.1');
    await once(sqs, 'listening');
    stripe = await startStripeDouble();

    // The local server of this process: its own data directory, Stripe through the double.
    dataDir = mkdtempSync(join(tmpdir(), 'cebs-shipped-data-'));
    restoreConfig = overrideConfig({
      DATA_DIR: dataDir,
      STRIPE_SECRET_KEY: DOUBLE_SECRET_KEY,
      STRIPE_API_BASE: stripe.url,
      STRIPE_WEBHOOK_SECRET: DOUBLE_WEBHOOK_SECRET,
    });
    useObjectStorage(undefined);
    usePaymentProcessor(undefined);
    server = createLocalServer({ mailSink });
    base = await listen(server, 0);

    const template = inject('databaseTemplate');
    if (template.kind !== 'postgres') throw new Error('PostgreSQL only');
    const [{ name }] = (await db().execute('select current_database() as name')) as unknown as [{ name: string }];
    const sesUrl = `http://127.0.0.1:${portOf(ses)}`;
    const queueUrl = `http://127.0.0.1:${portOf(sqs)}/000000000000/imports`;
    host = new BundleHost((bundle) => {
      const own = bundle.environment;
      const variables = deploymentVariables.get(bundle.name) ?? [];
      return {
        ...own,
        // Where the stack points the function at AWS, the emulators stand in (the SDK reads
        // AWS_ENDPOINT_URL_<SERVICE>); the database is this file's, reached without the RDS
        // Proxy's TLS (the test server has no certificate).
        DATABASE_URL: databaseUrl(template.url, name),
        DB_CONNECT_TIMEOUT_SECONDS: '5',
        JWT_SECRET: 'shipped-bundles-signing-key-0123456789abcdef0123',
        LOG_LEVEL: 'SILENT',
        APP_URL: 'https://app.example.test',
        PUBLIC_BASE_URL: 'https://api.example.test',
        // Stripe is configured explicitly (the double), so no bundle ever looks for the sandbox.
        STRIPE_SECRET_KEY: DOUBLE_SECRET_KEY,
        STRIPE_API_BASE: stripe.url,
        STRIPE_WEBHOOK_SECRET: DOUBLE_WEBHOOK_SECRET,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
        AWS_ENDPOINT_URL_S3: s3.endpoint,
        AWS_ENDPOINT_URL_SES: sesUrl,
        AWS_ENDPOINT_URL_SQS: `http://127.0.0.1:${portOf(sqs)}`,
        // s3rver stores aws-chunked bodies with their framing; checksums only where S3 requires them.
        AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
        AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
        ...(variables.includes('STORAGE_BUCKET') ? { STORAGE_BUCKET: s3.bucket, WORK_BUCKET: s3.bucket } : {}),
        ...(variables.includes('IMPORT_QUEUE_URL') ? { IMPORT_QUEUE_URL: queueUrl } : {}),
      };
    });
  }, 120_000);

  afterAll(async () => {
    host?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    restoreConfig();
    useObjectStorage(undefined);
    usePaymentProcessor(undefined);
    await s3?.close();
    ses?.closeAllConnections();
    await new Promise<void>((resolve) => (ses ? ses.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (sqs ? sqs.close(() => resolve()) : resolve()));
    await stripe?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  function bundleClient(): Client {
    const hit = new Set<string>();
    const sourceIp = `203.0.113.${100 + Math.floor(Math.random() * 100)}`;
    return {
      name: 'bundles',
      hit,
      async send(method, path, options = {}) {
        const url = new URL(path, 'https://api.example.test');
        const { route, params } = matchRoute(method, url.pathname);
        hit.add(route.operationId);
        const bundle = bundles.get(route.operationId);
        if (!bundle) throw new Error(`no bundle for ${route.operationId}`);
        const event = buildApiGatewayEvent(
          route,
          {
            method,
            url: `${url.pathname}${url.search}`,
            headers: { host: 'api.example.test', ...requestHeaders(options) },
            ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
            sourceIp,
          },
          params,
        );
        const timeoutMs = (route.lambda?.timeoutSeconds ?? dev.settings.lambda.timeoutSeconds) * 1000;
        const result = (await host.invoke(bundle, { event, timeoutMs, functionName: bundle.name })) as {
          statusCode?: number;
          headers?: Record<string, unknown>;
          body?: string;
          isBase64Encoded?: boolean;
        };
        return {
          status: result.statusCode ?? 200,
          headers: Object.fromEntries(
            Object.entries(result.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]),
          ),
          body: responseBody(result),
        };
      },
      async tokenFromMail(address, subject) {
        const store = (await (await fetch(`http://127.0.0.1:${portOf(ses)}/store`)).json()) as {
          emails: Array<{ destination: { to: string[] }; subject: string; body: { text?: string } }>;
        };
        const message = store.emails
          .filter((email) => email.destination.to.includes(address) && email.subject.includes(subject))
          .at(-1);
        if (!message) throw new Error(`No email "${subject}" to ${address} at the SES emulator`);
        const token = new URL(/https?:\/\/\S+/.exec(message.body.text ?? '')![0]).searchParams.get('token');
        if (!token) throw new Error('Email has no token link');
        return token;
      },
      async runImports() {
        // The SQS event source: each message the routes sent, handed to the worker bundle.
        while (queued.length > 0) {
          const messages = queued.splice(0);
          const result = (await host.invoke(workerBundle, {
            event: {
              Records: messages.map((body) => {
                const messageId = randomUUID();
                return {
                  messageId,
                  receiptHandle: `handle-${messageId}`,
                  body,
                  attributes: {
                    ApproximateReceiveCount: '1',
                    SentTimestamp: String(Date.now()),
                    SenderId: 'AIDAEXAMPLE',
                    ApproximateFirstReceiveTimestamp: String(Date.now()),
                  },
                  messageAttributes: {},
                  md5OfBody: createHash('md5').update(body).digest('hex'),
                  eventSource: 'aws:sqs',
                  eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:imports',
                  awsRegion: 'us-east-1',
                };
              }),
            },
            timeoutMs: 15 * 60 * 1000,
            functionName: 'importWorker',
          })) as { batchItemFailures?: unknown[] } | undefined;
          expect(result?.batchItemFailures ?? []).toEqual([]);
        }
      },
    };
  }

  /** What a step answered, as compared between the two runs. */
  interface Step {
    step: string;
    status: number;
    code?: string;
    shape: unknown;
    contentType?: string | undefined;
    requestIdHeader: boolean;
  }

  /**
   * The journey: sign-in, organizations, cases, an import through the worker, billing, reports,
   * custody and the audit chain; then one request to every route the journey did not reach. It
   * asserts what must hold on either side; the comparison of the two runs does the rest.
   */
  async function journey(client: Client): Promise<Step[]> {
    const steps: Step[] = [];
    const call = async (step: string, method: string, path: string, options?: RequestOptions) => {
      const answer = await client.send(method, path, options);
      // Every answer is the service's envelope: no bare gateway error.
      expect(answer.body, `${client.name} ${step}`).toMatchObject({ statusCode: answer.status });
      steps.push({
        step,
        status: answer.status,
        code: answer.body?.error?.code,
        shape: shapeOf(answer.body),
        contentType: answer.headers['content-type']?.split(';')[0],
        requestIdHeader: answer.headers['x-request-id'] !== undefined,
      });
      return answer;
    };
    const ok = async (step: string, method: string, path: string, options?: RequestOptions, status = 200) => {
      const answer = await call(step, method, path, options);
      expect(answer.status, `${client.name} ${step}: ${JSON.stringify(answer.body).slice(0, 500)}`).toBe(status);
      return answer.body.data;
    };

    const suffix = randomBytes(4).toString('hex');
    const owner = { name: 'Ann Shipped', email: `ann.${suffix}@example.com`, password: `pw-${suffix}-owner` };
    const invitee = { name: 'Bob Shipped', email: `bob.${suffix}@example.com`, password: `pw-${suffix}-invitee` };

    // Sign-in: register, verify, login, refresh.
    await ok('check email', 'POST', '/auth/check-email-availability', { body: { email: owner.email } });
    const registered = await ok('register', 'POST', '/auth/register', {
      body: { ...owner, acceptTerms: true, organizationName: `Shipped ${suffix} LLP` },
    });
    const orgId: string = registered.organizationInfo.organization.id;
    await ok('verify email', 'POST', '/user/verify-email', {
      body: { token: await client.tokenFromMail(owner.email, 'Verify') },
    });
    const login = await ok('login', 'POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
    const refreshed = await ok('refresh', 'POST', '/auth/refresh', { body: { refreshToken: login.refreshToken } });
    const as = { token: refreshed.accessToken as string, organization: orgId };
    const profile = await ok('profile', 'GET', '/user/profile', as);
    expect(profile.email).toBe(owner.email);

    // Organizations: create, invite, accept.
    await ok('create organization', 'POST', '/organization', { ...as, body: { name: `Second ${suffix} LLP` } }, 201);
    await ok('invite', 'POST', `/organization/${orgId}/invite`, { ...as, body: { emails: [invitee.email] } }, 201);
    await call('accept invitation', 'POST', `/organization/${orgId}/invitation/accept`, {
      body: {
        token: await client.tokenFromMail(invitee.email, 'You are invited'),
        email: invitee.email,
        name: invitee.name,
        password: invitee.password,
      },
    });
    const members = await ok('members', 'GET', `/organization/${orgId}/members`, as);
    const inviteeId: string = members.data.find((m: { user: { email: string } }) => m.user.email === invitee.email).user
      .id;
    const inviteeLogin = await ok('invitee login', 'POST', '/auth/login', {
      body: { email: invitee.email, password: invitee.password },
    });

    // Cases: create, give the invitee access, read it as the invitee.
    const created = await ok('create case', 'POST', '/cases', { ...as, body: { name: `Doe v. Roe ${suffix}` } }, 201);
    const caseId: string = created.id;
    await ok('grant access', 'PUT', `/cases/${caseId}/access/${inviteeId}`, { ...as, body: { access: 'viewer' } });
    await ok('case as invitee', 'GET', `/cases/${caseId}`, { token: inviteeLogin.accessToken, organization: orgId });

    // Imports: create, upload the file to its link, start, the worker, the imported evidence.
    const mbox = [1, 2].map(
      (n) =>
        `From sender@example Mon Nov  2 10:00:00 2026\nMessage-ID: <m${n}.${suffix}@lee-law.example>\nDate: Mon, 02 Nov 2026 10:0${n}:00 +0000\nFrom: Ann Lee <ann@lee-law.example>\nTo: Bob Roe <bob@roe.example>\nSubject: Settlement ${n}\n\nSettlement ${n} body.\n\n`,
    );
    const file = mbox.join('');
    const importAnswer = await ok(
      'create import',
      'POST',
      `/cases/${caseId}/imports`,
      {
        ...as,
        body: {
          kind: 'email',
          fileName: 'client.mbox',
          contentType: 'application/mbox',
          sizeBytes: Buffer.byteLength(file),
        },
      },
      201,
    );
    const importId: string = importAnswer.import.id;
    const { 'content-length': _length, ...signed } = importAnswer.upload.headers as Record<string, string>;
    const link = new URL(importAnswer.upload.url);
    // The local server's links name PUBLIC_BASE_URL or where it listens; the bundles' are S3's.
    const uploadUrl = client.name === 'local server' ? `${base}${link.pathname}${link.search}` : link.toString();
    const uploaded = await fetch(uploadUrl, { method: 'PUT', headers: uploadHeaders(signed, file), body: file });
    expect(uploaded.status, await uploaded.text()).toBe(200);
    await ok('start import', 'POST', `/cases/${caseId}/imports/${importId}/start`, as, 202);
    await client.runImports();
    const finished = await ok('import', 'GET', `/cases/${caseId}/imports/${importId}`, as);
    expect(JSON.stringify(finished)).toMatch(/"status":"succeeded"/);
    const threads = await ok('threads', 'GET', `/local-emails/${caseId}/threads`, as);
    expect(threads.total).toBeGreaterThan(0);
    const threadId: string = threads.data[0].id;
    await ok('thread emails', 'GET', `/local-emails/${caseId}/threads/${encodeURIComponent(threadId)}/emails`, as);

    // Billing: a plan with its charge at the Stripe double, then a report.
    await call('select plan', 'POST', '/billing/plan', {
      ...as,
      body: {
        tier: 'tier3',
        successUrl: 'https://app.example.test/billing/done',
        cancelUrl: 'https://app.example.test/billing/cancel',
      },
    });
    await ok('current plan', 'GET', '/billing/plan/current', as);
    const now = Date.now();
    const window = {
      startDate: new Date(now - 86_400_000).toISOString(),
      endDate: new Date(now + 60_000).toISOString(),
    };
    await ok('billing report', 'POST', '/billing/report', { ...as, body: { ...window, format: 'json' } });
    // The PDF: pdf-lib's chunk, stored in the work bucket behind a link.
    await ok('billing report pdf', 'POST', '/billing/report', { ...as, body: { ...window, format: 'pdf' } });

    // Custody and the audit chain.
    const custody = await ok('custody', 'GET', `/cases/${caseId}/custody`, as);
    expect(JSON.stringify(custody)).toMatch(/client\.mbox|sha256|hash/i);
    await ok('verify audit chain', 'GET', `/organization/${orgId}/audit-events/verify`, as);

    // Every other route once, with the journey's ids: GETs, then changes, then deletions.
    const ids: Record<string, string> = {
      orgId,
      caseId,
      importId,
      userId: inviteeId,
      threadId,
      slug: registered.organizationInfo.organization.slug ?? 'none',
    };
    // Signing out ends the session the rest of the requests use: last.
    const order = (route: RouteDefinition) =>
      route.operationId === 'logout' ? 3 : ({ GET: 0, POST: 1, PATCH: 1, PUT: 1, DELETE: 2 }[route.method] ?? 1);
    const rest = routeList
      .filter((route) => !client.hit.has(route.operationId))
      .sort((a, b) => order(a) - order(b) || a.operationId.localeCompare(b.operationId));
    for (const route of rest) {
      const path = route.path.replace(/\{([^}]+)\}/g, (_m, name: string) => ids[name] ?? randomUUID());
      await call(`smoke ${route.operationId}`, route.method, path, {
        ...as,
        ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }),
      });
    }
    return steps;
  }

  it('answers a journey through every area as the local server does, every route bundle answering', async () => {
    const localStarted = performance.now();
    const local = localClient(() => base);
    const localSteps = await journey(local);
    timings.localJourneyMs = performance.now() - localStarted;

    const bundlesStarted = performance.now();
    const shipped = bundleClient();
    const shippedSteps = await journey(shipped);
    timings.bundleJourneyMs = performance.now() - bundlesStarted;

    expect(shippedSteps).toEqual(localSteps);
    expect([...shipped.hit].sort()).toEqual(routeList.map((route) => route.operationId).sort());
    expect(host.coldStarts).toContain('importWorker');
    console.info(
      'shipped bundles timings (ms):',
      JSON.stringify(timings),
      'cold starts:',
      host.coldStarts.length,
      'invocations:',
      host.invocations,
    );
  }, 600_000);
});
