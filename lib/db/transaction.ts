import { logger } from '../log';
import { db, type Tx } from './client';

export type AfterCommit = (effect: () => Promise<unknown>) => void;

/**
 * Runs `work` in one transaction. Side effects registered with `afterCommit` (sending email,
 * calling a payment processor) run only once the transaction has committed; their failure is
 * logged, never turned into a failed request, because the committed change already carries what
 * is needed to retry them (for example the email outbox).
 */
export async function transaction<T>(work: (tx: Tx, afterCommit: AfterCommit) => Promise<T>): Promise<T> {
  const effects: Array<() => Promise<unknown>> = [];
  const result = await db().transaction((tx) => work(tx, (effect) => effects.push(effect)));
  for (const effect of effects) {
    try {
      await effect();
    } catch (error) {
      logger.error('after-commit effect failed', { error });
    }
  }
  return result;
}
