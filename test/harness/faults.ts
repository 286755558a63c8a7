import { connect, createServer, type Server, type Socket } from 'node:net';
import type { SQL } from 'drizzle-orm';
import type { Database } from '../../lib/db/client';

/** What the fault proxy does with connections: pass them on, reset them at once, or accept and never answer. */
export type ProxyMode = 'forward' | 'drop' | 'hang';

export interface FaultProxy {
  /** Port on 127.0.0.1 to connect to instead of the target. */
  readonly port: number;
  /** Connections accepted so far (each a client's connection attempt). */
  readonly accepted: number;
  /** How new connections are treated from now on. */
  setMode(mode: ProxyMode): void;
  /** Breaks every open connection, as a database restart or a network failure does mid-query. */
  cutAll(): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of a server (the PostgreSQL server in the fault tests): the service's pool
 * connects through it, and the test decides when the database "goes down" and comes back, without
 * touching the real server that other test files share.
 */
export async function startFaultProxy(target: { host: string; port: number }): Promise<FaultProxy> {
  let mode: ProxyMode = 'forward';
  let accepted = 0;
  const open = new Set<Socket>();
  const track = (socket: Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    accepted += 1;
    track(client);
    if (mode === 'drop') {
      // A reset, as a host whose server is gone answers.
      client.resetAndDestroy();
      return;
    }
    if (mode === 'hang') return;
    const upstream = connect(target.port, target.host);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('fault proxy: no port');
  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    setMode: (next) => {
      mode = next;
    },
    cutAll: () => {
      for (const socket of open) socket.resetAndDestroy();
    },
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Locks rows with `lock` (a `... for update`) in a transaction of `database` until `release`, so a
 * request that needs them waits inside its statement: a request held mid-flight, on demand.
 */
export function holdRows(database: Database, lock: SQL) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let taken!: () => void;
  const lockTaken = new Promise<void>((resolve) => {
    taken = resolve;
  });
  const holder = database.transaction(async (tx) => {
    await tx.execute(lock);
    taken();
    await released;
  });
  return {
    taken: lockTaken,
    release: async () => {
      release();
      await holder;
    },
  };
}
