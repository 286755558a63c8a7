import { isUtf8 } from 'node:buffer';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { now } from '../../lib/clock';
import { config, serverUrl, useListeningUrl } from '../../lib/config';
import { CORS_HEADERS } from '../../lib/http/cors';
import { functionTimeoutSeconds } from '../../lib/http/route';
import { MAX_REQUEST_BODY_BYTES } from '../../lib/http/payload-limits';
import { logger } from '../../lib/log';
import type { LocalMailSink } from '../../lib/mail/transport';
import { handleOpenApiRoute } from '../openapi/serve';
import { buildApiGatewayEvent, buildLambdaContext } from './apigw-event';
import { handleDevRoute } from './dev-routes';
import { sendError, writeErrorToSocket } from './error-answer';
import { loadHandler, matchRoute } from './router';
import { readAtMost } from './request-body';
import { asDelivered, eventTooLarge, MAX_URL_BYTES } from './lambda-limits';

export { MAX_URL_BYTES };
/** Largest header set (names and values) served, answered 431 beyond. */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * What Node's parser buffers of request line and headers before it gives up (clientError, 431):
 * well above the two limits above, so that they answer first and tell a long URL from large headers.
 */
const PARSER_MAX_HEADER_BYTES = 1024 * 1024;

export interface LocalServer {
  server: Server;
  url: string;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, statusCode: number, payload: unknown): void {
  res.writeHead(statusCode, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(payload));
}

function corsHeaders(): Record<string, string> {
  return {
    'Access-Control-Allow-Origin': config().CORS_ORIGINS.split(',')[0]!.trim() || '*',
    'Access-Control-Allow-Methods': 'GET,POST,PUT,PATCH,DELETE,OPTIONS',
    'Access-Control-Allow-Headers': CORS_HEADERS.allow.join(','),
    'Access-Control-Max-Age': '600',
  };
}

/** Bytes of the header set as sent: each `name: value` line. */
function headerBytes(req: IncomingMessage): number {
  let total = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    total += Buffer.byteLength(req.rawHeaders[i]!) + Buffer.byteLength(req.rawHeaders[i + 1]!) + 4;
  return total;
}

/** The request target as a URL; null when it is none (`//`, `http://[`). */
function requestUrl(req: IncomingMessage): URL | null {
  try {
    return new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return null;
  }
}

/**
 * The body as the event carries it: text when it is UTF-8, else base64 (as API Gateway delivers a
 * binary body), so the handler refuses bad bytes itself and both paths answer alike; null when it
 * is larger than the service's request limit (MAX_REQUEST_BODY_BYTES, as the edge refuses it in the cloud).
 */
async function readBody(req: IncomingMessage): Promise<{ body: string; bodyIsBase64: boolean } | null> {
  const bytes = await readAtMost(req, MAX_REQUEST_BODY_BYTES);
  if (!bytes) return null;
  return isUtf8(bytes)
    ? { body: bytes.toString('utf8'), bodyIsBase64: false }
    : { body: bytes.toString('base64'), bodyIsBase64: true };
}

/**
 * Serves every route of the route table over HTTP by building the API Gateway event and invoking
 * the same middy handler that Lambda runs. Adds GET /health and, local only, GET /_dev/emails,
 * the sandbox processor's card set-up page, signed downloads of the local object store, and the
 * OpenAPI description (GET /openapi.json) with its reference page (GET /docs).
 */
export function createLocalServer(options: { mailSink: LocalMailSink }): Server {
  const server = createServer({ maxHeaderSize: PARSER_MAX_HEADER_BYTES }, async (req, res) => {
    try {
      const method = (req.method ?? 'GET').toUpperCase();
      if (Buffer.byteLength(req.url ?? '') > MAX_URL_BYTES)
        return sendError(res, 'URI_TOO_LONG', `The URL is longer than ${MAX_URL_BYTES} bytes`);
      if (headerBytes(req) > MAX_HEADER_BYTES)
        return sendError(res, 'HEADERS_TOO_LARGE', `The request headers are larger than ${MAX_HEADER_BYTES} bytes`);
      const url = requestUrl(req);
      if (!url) return sendError(res, 'BAD_REQUEST', 'The request target is not a valid URL');
      const { pathname } = url;
      if (method === 'GET' && pathname === '/health') return sendJson(res, 200, { status: 'ok' });
      if (method === 'GET' && pathname === '/_dev/emails') {
        return sendJson(res, 200, { data: options.mailSink.messages, statusCode: 200, timestamp: now().toISOString() });
      }
      // The API description and its reference page (local server only).
      if (
        (pathname === '/openapi.json' || pathname === '/docs' || pathname.startsWith('/docs/')) &&
        (await handleOpenApiRoute(req, res, pathname))
      )
        return;
      if (pathname.startsWith('/_sandbox/') || pathname.startsWith('/_local/')) {
        if (await handleDevRoute(req, res, url)) return;
      }
      if (method === 'OPTIONS') {
        res.writeHead(204, corsHeaders());
        return res.end();
      }
      const match = matchRoute(method, pathname);
      if (match.kind === 'not-found') return sendError(res, 'ROUTE_NOT_FOUND', `No route ${method} ${pathname}`);
      if (match.kind === 'malformed-path')
        return sendError(res, 'BAD_REQUEST', 'The path is not valid percent-encoding');
      if (match.kind === 'method-not-allowed')
        return sendError(res, 'METHOD_NOT_ALLOWED', `${method} is not allowed here`, {
          Allow: match.allowed.join(', '),
        });
      // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 6.3): not read.
      const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
      const read = hasBody ? await readBody(req) : { body: '', bodyIsBase64: false };
      const tooLarge = `The request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`;
      // The rest of the body is left unread: the connection cannot carry another request.
      if (read === null) return sendError(res, 'PAYLOAD_TOO_LARGE', tooLarge, { Connection: 'close' });
      const event = buildApiGatewayEvent(
        match.route,
        {
          method,
          url: req.url ?? '/',
          parsedUrl: url,
          headers: req.headers,
          ...read,
          sourceIp: req.socket.remoteAddress,
        },
        match.pathParameters,
      );
      // A body within the limit whose event Lambda would still refuse (text escaped beyond twice
      // its size, which no JSON body is): refused here too, never handed to the function.
      if (eventTooLarge(event)) return sendError(res, 'PAYLOAD_TOO_LARGE', tooLarge);
      const handler = await loadHandler(match.route);
      // The route's own function timeout, as in the cloud: a request still waiting a second before
      // it answers 503 (lib/http/deadline.ts). A result over Lambda's limit is the gateway's 500.
      const result = asDelivered(
        await handler(event, buildLambdaContext(match.route, functionTimeoutSeconds(match.route) * 1000)),
      );
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
      res.writeHead(result.statusCode ?? 200, headers);
      // A compressed answer travels base64-encoded in the result; the gateway sends its bytes.
      res.end(result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? ''));
    } catch (error) {
      logger.error('local server failed', { error });
      if (!res.headersSent) sendError(res, 'INTERNAL', 'Internal server error');
      else res.end();
    }
  });
  server.on('clientError', answerClientError);
  return server;
}

/**
 * What Node's HTTP parser refuses, in the error envelope rather than Node's bare text answers:
 * request line and headers beyond its buffer 431, anything that is not HTTP 400. A connection
 * already gone, or one whose current response has begun, is just closed (as Node does).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const answering = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
    socket.destroy();
    return;
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    writeErrorToSocket(
      socket,
      'HEADERS_TOO_LARGE',
      `The request line and headers are larger than ${PARSER_MAX_HEADER_BYTES} bytes`,
    );
    return;
  }
  writeErrorToSocket(socket, 'BAD_REQUEST', 'The request is not valid HTTP');
}

/**
 * Listens on `port` (0: any free one) and `host`, and answers the URL it is reached on. Until it
 * closes, links the service builds to itself name that address (unless PUBLIC_BASE_URL is set).
 */
export function listen(server: Server, port: number, host = config().HOST): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const url = serverUrl(host, (server.address() as AddressInfo).port);
      useListeningUrl(url);
      server.once('close', () => useListeningUrl(undefined));
      resolvePromise(url);
    });
  });
}
