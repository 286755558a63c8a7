import type { SNSEvent } from 'aws-lambda';
import { connectDb } from '../../lib/db/client';
import { logger } from '../../lib/log';
import { handleSesEvent, type SesEventOutcome } from '../../lib/mail/suppression';
import { observed } from '../../lib/observability';

/**
 * SES bounce and complaint events of the configuration set, delivered by SNS (not an API route):
 * puts the addresses of permanent bounces and complaints on the outbox's suppression list. A
 * malformed or irrelevant event is logged and ignored; only a database failure throws, and then
 * Lambda's asynchronous retries deliver the event again (recording it is idempotent).
 */
export const handler = observed(async (event: SNSEvent): Promise<SesEventOutcome[]> => {
  await connectDb();
  const outcomes: SesEventOutcome[] = [];
  for (const record of event.Records ?? []) {
    outcomes.push(await handleSesEvent(record.Sns?.Message ?? ''));
  }
  logger.info('ses events handled', {
    suppressed: outcomes.filter((outcome) => outcome.outcome === 'suppressed').length,
    ignored: outcomes.filter((outcome) => outcome.outcome === 'ignored').length,
  });
  return outcomes;
});
