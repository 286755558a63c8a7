import { and, asc, eq, exists, inArray, lte, ne, or, type SQL, sql } from 'drizzle-orm';
import { addSeconds, now } from '../clock';
import { db } from '../db/client';
import { evidenceObjects } from '../db/schema/audit';
import { evidenceImports } from '../db/schema/material';
import { storageReservations } from '../db/schema/organizations';
import { objectStorage } from '../storage/configured-storage';

/**
 * How long after its link lapses an upload never started is kept: an import may still be started
 * (or notes import the attachment) a little after the link's last minute. A day, the finest step
 * of an S3 lifecycle rule, which removes the cloud's never-started uploads on the staging prefix.
 */
export const LAPSED_UPLOAD_GRACE_SECONDS = 24 * 60 * 60;
/** Reservations removed per batch: one read, at most this many object deletions, one delete. */
const BATCH = 100;
/** Batches per maintenance run, so one run stays short; what is left waits for the next run. */
const MAX_BATCHES = 20;
/** Object deletions in flight at once. */
const CONCURRENT_DELETES = 8;

/**
 * Removes uploads never started: for each reservation whose link lapsed more than a day ago (no
 * import took it over, which deletes the row), its object and then its row, in bounded batches.
 * The reservation counts in the plan's storage until its row goes, so nothing kept goes
 * uncounted; if removing the object fails, the row stays and the next run tries again. An object
 * an import reads or evidence records is never removed, whatever its reservation says: only its
 * row goes. Returns how many reservations were removed.
 */
export async function removeLapsedUploads(): Promise<number> {
  const storage = objectStorage();
  let removed = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch += 1) {
    const lapsed = await db()
      .select({
        id: storageReservations.id,
        objectKey: storageReservations.objectKey,
        // An import's upload in parts: its parts go too (in the cloud the lifecycle rule aborts it as well).
        multipartUploadId: sql<string | null>`(${db()
          .select({ id: evidenceImports.multipartUploadId })
          .from(evidenceImports)
          .where(eq(evidenceImports.stagingKey, storageReservations.objectKey))
          .limit(1)})`,
        inUse: or(
          exists(db().select().from(evidenceObjects).where(eq(evidenceObjects.key, storageReservations.objectKey))),
          exists(
            db()
              .select()
              .from(evidenceImports)
              .where(
                and(
                  or(
                    eq(evidenceImports.stagingKey, storageReservations.objectKey),
                    eq(evidenceImports.objectKey, storageReservations.objectKey),
                  ),
                  ne(evidenceImports.status, 'awaiting_upload'),
                ),
              ),
          ),
        ) as SQL<boolean>,
      })
      .from(storageReservations)
      .where(lte(storageReservations.expiresAt, addSeconds(now(), -LAPSED_UPLOAD_GRACE_SECONDS)))
      .orderBy(asc(storageReservations.expiresAt))
      .limit(BATCH);
    if (lapsed.length === 0) break;
    const unused = lapsed.filter((reservation) => !reservation.inUse);
    for (let next = 0; next < unused.length; next += CONCURRENT_DELETES)
      await Promise.all(
        unused.slice(next, next + CONCURRENT_DELETES).map(async ({ objectKey, multipartUploadId }) => {
          if (multipartUploadId) await storage.abortMultipartUpload(objectKey, multipartUploadId);
          await storage.delete(objectKey);
        }),
      );
    await db()
      .delete(storageReservations)
      .where(
        inArray(
          storageReservations.id,
          lapsed.map((reservation) => reservation.id),
        ),
      );
    removed += lapsed.length;
    if (lapsed.length < BATCH) break;
  }
  return removed;
}
