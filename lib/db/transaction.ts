import { logger } from '../log';
import { db, dbDriver, type Tx } from './client';

export type AfterCommit = (effect: () => Promise<unknown>) => void;

/** Work a transaction must do last, just before COMMIT (the audit trail's events, lib/audit). */
interface Finisher<T> {
  state: T;
  finish: (tx: Tx, state: T) => Promise<void>;
}

/** The finishers of each open transaction() by key; a transaction not opened by it has none. */
const finishersOf = new WeakMap<Tx, Map<symbol, Finisher<unknown>>>();

/** Statements sent ahead of COMMIT in each open transaction() (sendWithCommit), their answers not yet read. */
const sentWithCommitOf = new WeakMap<Tx, Promise<unknown>[]>();

/** What sendWithCommit reaches in a postgres.js transaction: drizzle's session and its client. */
interface PostgresJsTransaction {
  session?: { client?: { unsafe?: (statement: string) => { execute(): Promise<unknown> } } };
}

/**
 * Sends `statement` (text without parameters) on a postgres.js transaction's connection now and
 * does not wait for its answer: the COMMIT `transaction()` sends next follows it in the same round
 * trip (postgres.js pipelines a connection's queries). Should the statement fail, the transaction
 * is aborted and PostgreSQL turns that COMMIT into a rollback; `transaction()` then throws the
 * statement's error, so nothing commits without it, as when it was awaited. False when it cannot be
 * sent so (PGlite, whose statements are no round trip, or a transaction not opened by
 * `transaction()`): the caller runs it itself.
 */
export function sendWithCommit(tx: Tx, statement: string): boolean {
  const sent = sentWithCommitOf.get(tx);
  const client = (tx as unknown as PostgresJsTransaction).session?.client;
  if (!sent || dbDriver() !== 'postgres' || typeof client?.unsafe !== 'function') return false;
  // execute() queues it on the transaction's connection at once, ahead of anything sent later.
  sent.push(client.unsafe(statement).execute());
  return true;
}

/**
 * Per-transaction state that `finish` writes inside the transaction once `work` is done, so it
 * commits with the change or not at all. Throws for a transaction not opened by `transaction()`,
 * whose work would otherwise commit without it.
 */
export function transactionState<T>(
  tx: Tx,
  key: symbol,
  init: () => T,
  finish: (tx: Tx, state: T) => Promise<void>,
): T {
  const finishers = finishersOf.get(tx);
  if (!finishers) throw new Error('This needs a transaction opened by transaction() (lib/db/transaction.ts)');
  let found = finishers.get(key) as Finisher<T> | undefined;
  if (!found) {
    found = { state: init(), finish };
    finishers.set(key, found as Finisher<unknown>);
  }
  return found.state;
}

/**
 * Runs `work` in one transaction. Side effects registered with `afterCommit` (sending email,
 * calling a payment processor) run only once the transaction has committed; their failure is
 * logged, never turned into a failed request, because the committed change already carries what
 * is needed to retry them (for example the email outbox).
 */
export async function transaction<T>(work: (tx: Tx, afterCommit: AfterCommit) => Promise<T>): Promise<T> {
  const effects: Array<() => Promise<unknown>> = [];
  const sentWithCommit: Promise<unknown>[] = [];
  const result = await db().transaction(async (tx) => {
    const finishers = new Map<symbol, Finisher<unknown>>();
    finishersOf.set(tx, finishers);
    sentWithCommitOf.set(tx, sentWithCommit);
    const done = await work(tx, (effect) => effects.push(effect));
    for (const { state, finish } of finishers.values()) await finish(tx, state);
    return done;
  });
  // A statement sent with the COMMIT that failed made that COMMIT a rollback: its error is the outcome.
  await Promise.all(sentWithCommit);
  for (const effect of effects) {
    try {
      await effect();
    } catch (error) {
      logger.error('after-commit effect failed', { error });
    }
  }
  return result;
}
