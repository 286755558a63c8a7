import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { sql } from 'drizzle-orm';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { routes } from '../../functions/routes';
import { type Connection, currentConnection, db, openPostgres, useConnection } from '../../lib/db/client';
import { expectError, invoke } from '../harness/invoke';

/**
 * Beyond the concurrency budget (infra/README.md "Concurrency budget"): when RDS Proxy's pool is
 * at its cap, a transaction waits up to the borrow timeout and the proxy then answers it with an
 * error; when the database itself is full, it refuses the connection (53300). Either way the
 * request answers 503 SERVICE_UNAVAILABLE with Retry-After in the error envelope, never 500.
 */

const onServer = inject('databaseTemplate').kind === 'postgres';

/** A PostgreSQL wire message: type byte, int32 length, body. */
function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** ErrorResponse with the given fields (S, V, C, M…). */
function errorResponse(fields: Record<string, string>): Buffer {
  const parts = Object.entries(fields).map(([key, value]) => Buffer.from(`${key}${value}\0`, 'utf8'));
  return message('E', Buffer.concat([...parts, Buffer.from([0])]));
}

const readyForQuery = message('Z', Buffer.from('I'));

/**
 * Stands in for RDS Proxy with its pool at the cap, past the borrow timeout: it accepts the client
 * (authentication happens at the proxy, not the database), then answers every statement with the
 * error the proxy sends when no database connection could be borrowed in time. Its SQLSTATE is not
 * documented: XX000 (internal error) here, so only the message can tell it.
 */
async function startExhaustedProxy(): Promise<Server & { port: number }> {
  const server = createServer((socket) => {
    let started = false;
    let typesAnswered = false;
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk) => {
      if (!started) {
        // SSLRequest (8 bytes, code 80877103): refused, the client goes on in plain text.
        if (chunk.length === 8 && chunk.readInt32BE(4) === 80877103) {
          socket.write('N');
          return;
        }
        started = true;
        const ok = Buffer.alloc(4);
        socket.write(Buffer.concat([message('R', ok), readyForQuery]));
        return;
      }
      // Terminate: the client is leaving.
      if (chunk[0] === 0x58) return;
      // The first statement of a connection is postgres.js's array-type lookup: answered with no
      // rows, so the borrow fails on the route's own statement (the lookup failing instead is an
      // unhandled rejection inside postgres.js: docs/decisions.md, issue 32, concurrency budget).
      if (!typesAnswered) {
        typesAnswered = true;
        const empty = Buffer.alloc(0);
        socket.write(
          Buffer.concat([
            message('1', empty),
            message('2', empty),
            message('n', empty),
            message('C', Buffer.from('SELECT 0\0')),
            readyForQuery,
          ]),
        );
        return;
      }
      socket.write(
        Buffer.concat([
          errorResponse({
            S: 'ERROR',
            V: 'ERROR',
            C: 'XX000',
            M: 'request to borrow a connection from the pool timed out',
          }),
          readyForQuery,
        ]),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { port: (server.address() as { port: number }).port });
}

function expectUnavailable(answer: Awaited<ReturnType<typeof invoke>>) {
  expectError(answer, 503, 'SERVICE_UNAVAILABLE');
  expect(answer.headers['retry-after']).toBe('5');
  expect(answer.body).toMatchObject({ statusCode: 503, requestId: expect.any(String) });
}

let own: Connection;
let swapped: Connection | undefined;

beforeAll(() => {
  own = currentConnection()!;
});

afterEach(async () => {
  useConnection(own);
  await swapped?.close().catch(() => {});
  swapped = undefined;
});

describe('beyond the connections the proxy may open', () => {
  it("answers 503 in the envelope when the proxy's borrow timeout passes, not 500", async () => {
    const proxy = await startExhaustedProxy();
    try {
      swapped = await openPostgres(`postgres://root@127.0.0.1:${proxy.port}/cebs`, { max: 2 });
      useConnection(swapped);
      expectUnavailable(await invoke(routes.login, { body: { email: 'a@example.com', password: 'x' } }));
    } finally {
      proxy.close();
    }
  });

  it.runIf(onServer)('answers 503 in the envelope when the database has no connection left (53300)', async () => {
    // A login whose connection limit is reached, as the database answers once max_connections is.
    const role = `cebs_full_${randomBytes(4).toString('hex')}`;
    await db().execute(sql.raw(`create role ${role} login connection limit 0`));
    try {
      const [{ name }] = (await db().execute(sql`select current_database() as name`)) as unknown as [{ name: string }];
      const template = inject('databaseTemplate');
      if (template.kind !== 'postgres') return;
      const url = new URL(template.url);
      url.username = role;
      url.pathname = `/${name}`;
      swapped = await openPostgres(url.toString(), { max: 2 });
      useConnection(swapped);
      expectUnavailable(await invoke(routes.login, { body: { email: 'a@example.com', password: 'x' } }));
    } finally {
      useConnection(own);
      await db().execute(sql.raw(`drop role ${role}`));
    }
  });
});
