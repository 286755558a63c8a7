import type { MiddlewareObj } from '@middy/core';
import { logger } from '../log';
import { metricsEnabled } from './names';
import { delegatingMiddleware, optionalModule } from './optional';

/**
 * The service's business metrics (CloudWatch namespace `CaseEvidence`, dimensions `service` and
 * `environment`), written as EMF log lines by Powertools Metrics (./emf.ts) and only in Lambda
 * (`metricsEnabled`). Elsewhere every function here returns at once and Powertools is never loaded.
 *
 * Callers record what committed: call these after the transaction that made the change returned,
 * or from an `afterCommit` effect (lib/db/transaction.ts), never inside it, so a rolled-back
 * charge or import is never counted. The list, with what each means, is in infra/README.md.
 */

const emf = optionalModule('metrics', metricsEnabled, () => import('./emf'));

function add(name: string, value: number, dimensions?: Record<string, string>): void {
  const loaded = emf.current();
  if (!loaded || !Number.isFinite(value)) return;
  try {
    loaded.add(name, value, dimensions);
  } catch (error) {
    // A metric is never worth failing the request (or the after-commit work) for.
    logger.warn('metric not recorded', { error, metric: name });
  }
}

/** A charge recorded (lib/billing/record-charge.ts recordCharge): its total and what credits paid of it. */
export function chargeCreated(charge: { amountCents: number; creditsAppliedCents: number }): void {
  add('ChargesCreated', 1);
  add('ChargedCents', charge.amountCents);
  add('CreditsAppliedCents', charge.creditsAppliedCents);
}

/** Credits added to an organization's balance: the unused part of a plan, or a payment of a voided invoice kept. */
export function creditsAdded(amountCents: number): void {
  if (amountCents > 0) add('CreditsAddedCents', amountCents);
}

/** An import job ended (lib/material/imports/run.ts): its outcome and the items it imported, by import kind. */
export function importFinished(kind: string, status: 'succeeded' | 'failed', itemsImported: number): void {
  add(status === 'succeeded' ? 'ImportsSucceeded' : 'ImportsFailed', 1, { kind });
  add('ItemsImported', itemsImported, { kind });
}

/** Evidence items imported outside an import job (device notes posted by the desktop extractor). */
export function itemsImported(kind: string, count: number): void {
  if (count > 0) add('ItemsImported', count, { kind });
}

/** Outbox messages handed to the mail transport (lib/mail/outbox.ts). */
export function mailsSent(count: number): void {
  if (count > 0) add('MailsSent', count);
}

/** A delivery attempt failed; `final`: it was the last attempt and the message is given up (status failed). */
export function mailFailed(final: boolean): void {
  add('MailAttemptsFailed', 1);
  if (final) add('MailsFailed', 1);
}

/**
 * middy middleware: the `ColdStart` metric (dimension `function_name`) on an execution
 * environment's first invocation, and the invocation's metrics written when it ends, answered or
 * failed. Does nothing when metrics are off.
 */
export function metricsMiddleware<E, R, C extends import('aws-lambda').Context>(): MiddlewareObj<E, R, Error, C> {
  return delegatingMiddleware('metrics', emf, (loaded) => loaded.middleware());
}
