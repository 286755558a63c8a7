import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import postgres from 'postgres';
import { now } from '../../lib/clock';
import { config } from '../../lib/config';
import { createBaseline, HttpFailure } from './baseline';

/**
 * The benchmark's baseline: POST /auth/login and GET /user/profile on bare node:http with
 * postgres.js and hand-written SQL (no middy, no drizzle, no API Gateway event). It runs the same
 * statements the service's drizzle queries emit, the same scrypt verification, the same JWT code,
 * and answers the same envelope, so `service / baseline` is the cost of the framework layers. The
 * routes themselves are in baseline.ts (also called in-process by handler-cpu.ts).
 *
 * Env: DATABASE_URL (required), PORT, JWT_SECRET, DB_POOL_MAX (as the service). Run by run.ts.
 */

const { DATABASE_URL, PORT, DB_POOL_MAX, REFRESH_TOKEN_TTL_DAYS } = config();
if (!DATABASE_URL) throw new Error('DATABASE_URL is required');
const sql = postgres(DATABASE_URL, { max: DB_POOL_MAX, onnotice: () => {} });
/**
 * Started with BASELINE_PROFILE_CACHE=1 the baseline keeps the service's 60-second profile cache
 * (one statement a request, as the service), the stricter comparison; without it the baseline is
 * the one issue 19's target was set against (two statements a request).
 */
const { login, profile } = createBaseline(sql, {
  profileCacheMs: process.env.BASELINE_PROFILE_CACHE === '1' ? 60_000 : 0,
  refreshTokenTtlDays: REFRESH_TOKEN_TTL_DAYS,
});

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpFailure(400, 'MALFORMED_JSON');
  }
}

function send(res: ServerResponse, statusCode: number, payload: unknown): void {
  res.writeHead(statusCode, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(payload));
}

const server = createServer(async (req, res) => {
  try {
    const route = `${req.method} ${new URL(req.url ?? '/', 'http://localhost').pathname}`;
    let data: unknown;
    if (route === 'GET /health') return send(res, 200, { status: 'ok' });
    else if (route === 'POST /auth/login') data = await login(await readJson(req), req.socket.remoteAddress ?? null);
    else if (route === 'GET /user/profile') data = await profile(req.headers.authorization);
    else throw new HttpFailure(404, 'ROUTE_NOT_FOUND');
    send(res, 200, { data, statusCode: 200, timestamp: now().toISOString() });
  } catch (error) {
    const failure = error instanceof HttpFailure ? error : new HttpFailure(500, 'INTERNAL');
    if (failure.statusCode === 500) console.error(error);
    send(res, failure.statusCode, {
      statusCode: failure.statusCode,
      timestamp: now().toISOString(),
      error: { code: failure.code, message: failure.code },
      requestId: null,
    });
  }
});

server.listen(PORT, process.env.HOST ?? '127.0.0.1', () => {
  console.log(`baseline on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

const shutdown = () => {
  server.close();
  void sql.end({ timeout: 5 }).finally(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
