import { and, asc, eq, isNotNull, isNull, lte } from 'drizzle-orm';
import { addSeconds, now } from '../../clock';
import { db } from '../../db/client';
import { evidenceImports } from '../../db/schema/material';
import { logger } from '../../log';
import { STAGING_EXPIRATION_DAYS } from '../../storage/keys';

/**
 * Days after its link was issued that an import still queued with its upload not yet copied into
 * evidence is reported: a week before the staging lifecycle rule may remove the upload, time for
 * an operator to give the organization's queue a worker (or the rule more days).
 */
export const IMPORT_WAIT_ALERT_DAYS = STAGING_EXPIRATION_DAYS - 7;
/** Imports named in one report (the count is of these too): enough to act on. */
const REPORTED = 100;

/**
 * Maintenance: imports waiting their turn (queued, never run far enough to copy their upload)
 * whose link was issued IMPORT_WAIT_ALERT_DAYS ago or more. Their upload is still in `staging/`,
 * which the cloud's lifecycle rule empties after STAGING_EXPIRATION_DAYS; the import would then
 * fail UPLOAD_CHANGED through no fault of its organization. Logged at ERROR (the maintenance
 * function's logged-errors alarm); returns how many there are, up to REPORTED.
 * The link's issue is the upload's earliest date, so the age is never underestimated.
 */
export async function reportImportsNearStagingExpiry(): Promise<number> {
  const issuedBefore = addSeconds(now(), -IMPORT_WAIT_ALERT_DAYS * 86_400);
  const waiting = await db()
    .select({
      importId: evidenceImports.id,
      organizationId: evidenceImports.organizationId,
      createdAt: evidenceImports.createdAt,
    })
    .from(evidenceImports)
    .where(
      and(
        eq(evidenceImports.status, 'queued'),
        isNotNull(evidenceImports.stagingKey),
        isNull(evidenceImports.sha256),
        lte(evidenceImports.createdAt, issuedBefore),
      ),
    )
    .orderBy(asc(evidenceImports.createdAt))
    .limit(REPORTED);
  if (waiting.length > 0)
    logger.error('imports waiting near the staging expiry: their uploads are removed unless they run soon', {
      stagingExpirationDays: STAGING_EXPIRATION_DAYS,
      imports: waiting,
    });
  return waiting.length;
}
