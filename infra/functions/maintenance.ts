import { connectDb } from '../../lib/db/client';
import { logger } from '../../lib/log';
import { runMaintenance } from '../../lib/maintenance';
import { observed } from '../../lib/observability';

/**
 * Scheduled by the stack (EventBridge, every few minutes): the cloud counterpart of the local
 * server's maintenance loop. Delivers due outbox mail, prunes rate-limit windows and creates
 * missing payment-processor customers. Overlapping runs are safe (outbox messages are leased).
 * Traced, with the cold-start and mail metrics (lib/observability).
 */
export const handler = observed(async (): Promise<{ emailsSent: number; customersCreated: number }> => {
  await connectDb();
  const result = await runMaintenance();
  logger.info('maintenance done', result);
  return result;
});
