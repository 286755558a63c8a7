import { connectDb } from '../../lib/db/client';
import { logger } from '../../lib/log';
import { type MaintenanceCounts, runMaintenance } from '../../lib/maintenance';
import { observed } from '../../lib/observability';

/**
 * Scheduled by the stack (EventBridge, every few minutes): the cloud counterpart of the local
 * server's maintenance loop (lib/maintenance.ts: outbox mail, pruning, processor customers,
 * stalled imports, lapsed uploads, old documents; an import waiting near the staging expiry is
 * logged at ERROR, which the stack alarms on). Overlapping runs are safe (outbox messages are leased).
 * Traced, with the cold-start and mail metrics (lib/observability).
 */
export const handler = observed(async (): Promise<MaintenanceCounts> => {
  await connectDb();
  const result = await runMaintenance();
  logger.info('maintenance done', result);
  return result;
});
