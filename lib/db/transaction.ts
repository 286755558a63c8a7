import { logger } from '../log';
import { db, type Tx } from './client';

export type AfterCommit = (effect: () => Promise<unknown>) => void;

/** Work a transaction must do last, just before COMMIT (the audit trail's events, lib/audit). */
interface Finisher<T> {
  state: T;
  finish: (tx: Tx, state: T) => Promise<void>;
}

/** The finishers of each open transaction() by key; a transaction not opened by it has none. */
const finishersOf = new WeakMap<Tx, Map<symbol, Finisher<unknown>>>();

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
  const result = await db().transaction(async (tx) => {
    const finishers = new Map<symbol, Finisher<unknown>>();
    finishersOf.set(tx, finishers);
    const done = await work(tx, (effect) => effects.push(effect));
    for (const { state, finish } of finishers.values()) await finish(tx, state);
    return done;
  });
  for (const effect of effects) {
    try {
      await effect();
    } catch (error) {
      logger.error('after-commit effect failed', { error });
    }
  }
  return result;
}
