import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type DoubleState, newId, type RecordedRequest, type Route, StripeHttpError } from './state';

/**
 * The double's HTTP side, whatever the resource: Stripe's form bodies in, JSON out, the API key
 * checked, injected failures applied, Idempotency-Key honoured, every request recorded in `state`.
 */

/** `a[b][0]=x&c=y` into `{ a: { b: ['x'] }, c: 'y' }`, the way Stripe reads form bodies. */
export function parseStripeForm(text: string): Record<string, any> {
  const root: Record<string, any> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const parts = key.replace(/\]/g, '').split('[');
    let node: any = root;
    for (const [index, part] of parts.entries()) {
      const last = index === parts.length - 1;
      if (last) {
        if (Array.isArray(node) && part === '') node.push(value);
        else node[part] = value;
      } else {
        node[part] ??= /^\d*$/.test(parts[index + 1]!) ? [] : {};
        node = node[part];
      }
    }
  }
  return root;
}

/** A path with `:id` segments (or a pattern as it is) as an anchored pattern. */
export function pathPattern(path: string | RegExp): RegExp {
  if (path instanceof RegExp) return path;
  const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(response: ServerResponse, status: number, body: unknown, replayed: boolean): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'request-id': newId('req'),
    ...(replayed ? { 'idempotent-replayed': 'true' } : {}),
  });
  response.end(text);
}

/** Runs the endpoint; an error the endpoint raised is an answer too (and is stored for replays, as Stripe does). */
function execute(
  routes: Route[],
  method: string,
  path: string,
  body: Record<string, any>,
): { status: number; body: unknown } {
  const route = routes.find((r) => r.method === method && r.pattern.test(path));
  if (!route) {
    return {
      status: 404,
      body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` } },
    };
  }
  try {
    const result = route.run(body, route.pattern.exec(path)!.slice(1));
    return { status: result.status ?? 200, body: result.body };
  } catch (error) {
    if (error instanceof StripeHttpError) return { status: error.status, body: { error: error.error } };
    throw error;
  }
}

/** Serves `routes` over `state` on a free port of 127.0.0.1 (listening once this resolves). */
export async function startServer(state: DoubleState, routes: Route[]): Promise<Server> {
  const server = createServer((request, response) => {
    void (async () => {
      const method = request.method ?? 'GET';
      const url = new URL(request.url ?? '/', 'http://double.local');
      const raw = await readBody(request);
      const body = method === 'GET' ? parseStripeForm(url.search.slice(1)) : parseStripeForm(raw);
      const idempotencyKey =
        typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : undefined;
      const record: RecordedRequest = {
        method,
        path: url.pathname,
        idempotencyKey,
        body,
        status: 'dropped',
        replayed: false,
      };
      state.requests.push(record);

      if (!/^Bearer sk_/.test(request.headers.authorization ?? '')) {
        record.status = 401;
        send(response, 401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided.' } }, false);
        return;
      }

      const rule = state.failures.find((f) => f.remaining > 0 && f.method === method && f.pattern.test(url.pathname));
      if (rule) rule.remaining -= 1;
      if (rule?.mode === 'drop-before') {
        request.socket.destroy();
        return;
      }
      if (rule?.mode === 500) {
        record.status = 500;
        send(
          response,
          500,
          { error: { type: 'api_error', message: 'An unknown error occurred while processing your request.' } },
          false,
        );
        return;
      }

      const fingerprint = `${method} ${url.pathname} ${raw}`;
      const stored = idempotencyKey && method === 'POST' ? state.idempotent.get(idempotencyKey) : undefined;
      let answer: { status: number; body: unknown };
      if (stored && stored.fingerprint !== fingerprint) {
        answer = {
          status: 400,
          body: {
            error: {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`,
            },
          },
        };
      } else if (stored) {
        answer = { status: stored.status, body: stored.body };
        record.replayed = true;
      } else {
        answer = execute(routes, method, url.pathname, body);
        if (idempotencyKey && method === 'POST')
          state.idempotent.set(idempotencyKey, { fingerprint, status: answer.status, body: answer.body });
      }

      if (rule?.mode === 'drop-after') {
        // The request took effect; the answer is lost on the way back.
        request.socket.destroy();
        return;
      }
      record.status = answer.status;
      send(response, answer.status, answer.body, record.replayed);
    })().catch((error) => {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: { type: 'api_error', message: `stripe double: ${(error as Error).message}` } }),
      );
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
