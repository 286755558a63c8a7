import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { now } from '../../lib/clock';
import { config } from '../../lib/config';
import type { LocalMailSink } from '../../lib/mail/transport';
import { handleOpenApiRoute } from '../openapi/serve';
import { buildApiGatewayEvent, buildLambdaContext } from './apigw-event';
import { handleDevRoute } from './dev-routes';
import { loadHandler, matchRoute } from './router';
import { readAtMost } from './request-body';

/** Lambda's synchronous payload limit; larger bodies never reach a function in the cloud either. */
const MAX_BODY_BYTES = 6 * 1024 * 1024;

export interface LocalServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, statusCode: number, payload: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(statusCode, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(payload));
}

function errorBody(statusCode: number, code: string, message: string) {
  return { statusCode, timestamp: now().toISOString(), error: { code, message }, requestId: null };
}

function corsHeaders(): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': config().CORS_ORIGINS.split(',')[0]!.trim() || '*',
    'Access-Control-Allow-Methods': 'GET,POST,PUT,PATCH,DELETE,OPTIONS',
    'Access-Control-Allow-Headers': 'Authorization,Content-Type,organization,X-Request-Id',
    'Access-Control-Max-Age': '600',
  };
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  return (await readAtMost(req, MAX_BODY_BYTES))?.toString('utf8') ?? null;
}

/**
 * Serves every route of the route table over HTTP by building the API Gateway event and invoking
 * the same middy handler that Lambda runs. Adds GET /health and, local only, GET /_dev/emails,
 * the sandbox processor's card set-up page, signed downloads of the local object store, and the
 * OpenAPI description (GET /openapi.json) with its reference page (GET /docs).
 */
export function createLocalServer(options: { mailSink: LocalMailSink }): Server {
  return createServer(async (req, res) => {
    try {
      const method = (req.method ?? 'GET').toUpperCase();
      const pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
      if (method === 'GET' && pathname === '/health') return sendJson(res, 200, { status: 'ok' });
      if (method === 'GET' && pathname === '/_dev/emails') {
        return sendJson(res, 200, { data: options.mailSink.messages, statusCode: 200, timestamp: now().toISOString() });
      }
      // The API description and its reference page (local server only).
      if ((pathname === '/openapi.json' || pathname === '/docs' || pathname.startsWith('/docs/')) && (await handleOpenApiRoute(req, res, pathname))) return;
      if (pathname.startsWith('/_sandbox/') || pathname.startsWith('/_local/')) {
        if (await handleDevRoute(req, res, new URL(req.url ?? '/', 'http://localhost'))) return;
      }
      if (method === 'OPTIONS') {
        res.writeHead(204, corsHeaders());
        return res.end();
      }
      const match = matchRoute(method, pathname);
      if (match.kind === 'not-found') return sendJson(res, 404, errorBody(404, 'ROUTE_NOT_FOUND', `No route ${method} ${pathname}`));
      if (match.kind === 'method-not-allowed') {
        return sendJson(res, 405, errorBody(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed here`), { Allow: match.allowed.join(', ') });
      }
      const body = await readBody(req);
      if (body === null) return sendJson(res, 413, errorBody(413, 'PAYLOAD_TOO_LARGE', 'The request body is larger than 6 MB'));
      const event = buildApiGatewayEvent(match.route, { method, url: req.url ?? '/', headers: req.headers, body, sourceIp: req.socket.remoteAddress }, match.pathParameters);
      const handler = await loadHandler(match.route);
      const result = await handler(event, buildLambdaContext(match.route));
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
      res.writeHead(result.statusCode ?? 200, headers);
      res.end(result.body ?? '');
    } catch (error) {
      console.error(error);
      if (!res.headersSent) sendJson(res, 500, errorBody(500, 'INTERNAL', 'Internal server error'));
      else res.end();
    }
  });
}

export function listen(server: Server, port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo;
      resolvePromise(`http://${host}:${address.port}`);
    });
  });
}
