import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import canonicalize from 'canonicalize';
import { eq } from 'drizzle-orm';
import { recordAuditNow } from '../audit';
import { type AuditScope, currentAuditScope, withAuditScope } from '../audit/scope';
import { db } from '../db/client';
import { evidenceObjects } from '../db/schema/audit';
import { cases } from '../db/schema/cases';
import { digestingStream } from '../storage/digesting-stream';

/**
 * What every evidence item records at import (issue 16): the SHA-256 (hex) of its source bytes and
 * their size, so anyone holding the source can recompute it (`sha256sum`) and show it unaltered.
 *
 * - an email: the raw RFC 822 message as it appears in the file
 *   (lib/material/importers/readers/mbox.ts says what that is inside an mbox);
 * - an email attachment: its decoded bytes, which is also the stored object;
 * - a network message (CSV row), a support ticket (JSON) and a device note: the RFC 8785 canonical
 *   JSON (JCS, as the audit chain uses) of the record as parsed from its source, hashed as UTF-8;
 *   the size is that serialization's byte length;
 * - a device-note attachment: the object's bytes, streamed from storage.
 */
export interface EvidenceHash {
  sha256: string;
  sizeBytes: number;
}

export function hashBytes(bytes: Uint8Array): EvidenceHash {
  return { sha256: createHash('sha256').update(bytes).digest('hex'), sizeBytes: bytes.byteLength };
}

/** The RFC 8785 serialization of `record` (as parsed from its source) and its hash. */
export function hashCanonical(record: unknown): EvidenceHash {
  const serialized = canonicalize(record);
  if (serialized === undefined) throw new Error('Evidence record cannot be serialized');
  return hashBytes(Buffer.from(serialized, 'utf8'));
}

/** Hashes a stream chunk by chunk: never more than one chunk in memory, whatever the object's size. */
export async function hashStream(chunks: AsyncIterable<Uint8Array>): Promise<EvidenceHash> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of chunks) {
    hash.update(chunk);
    sizeBytes += chunk.byteLength;
  }
  return { sha256: hash.digest('hex'), sizeBytes };
}

/**
 * Hashes a stream as it passes on (copied into evidence): `digest()` gives the hash and size of
 * exactly the bytes that went through, once the consumer has read them all.
 */
export function hashWhileStreaming(source: Readable): { stream: Readable; digest(): EvidenceHash } {
  const hash = createHash('sha256');
  const passing = digestingStream(hash);
  source.on('error', (error) => passing.stream.destroy(error));
  source.pipe(passing.stream);
  return { stream: passing.stream, digest: () => ({ sha256: hash.digest('hex'), sizeBytes: passing.sizeBytes() }) };
}

/** Who imported an item: the user of the running request or command; null for staff and the system. */
export const importingUserId = (): string | null => currentAuditScope().actor.userId;

/**
 * What a download of `key` may do, checked before any byte is served: objects without an
 * evidence_objects row (billing reports, custody PDFs) are served as they are; an evidence object
 * is hashed first (`firstPass` streams it) and served only when it still matches the hash recorded
 * at import. Either outcome of an evidence object is an audit event of the case's organization,
 * recorded before answering: a mismatch `evidence.object.integrity_failed` (never served), a match
 * `evidence.object.downloaded`.
 */
export async function checkEvidenceDownload(
  key: string,
  firstPass: () => AsyncIterable<Uint8Array>,
  scope: AuditScope,
): Promise<'not-evidence' | 'verified' | 'integrity-failed'> {
  const [recorded] = await db()
    .select({
      caseId: evidenceObjects.caseId,
      sha256: evidenceObjects.sha256,
      sizeBytes: evidenceObjects.sizeBytes,
      organizationId: cases.organizationId,
    })
    .from(evidenceObjects)
    .leftJoin(cases, eq(cases.id, evidenceObjects.caseId))
    .where(eq(evidenceObjects.key, key));
  if (!recorded) return 'not-evidence';
  const actual = await hashStream(firstPass());
  const intact = actual.sha256 === recorded.sha256 && actual.sizeBytes === recorded.sizeBytes;
  // A case deleted since keeps its objects' rows but has no organization to record in: still never served altered.
  if (recorded.organizationId) {
    const event = {
      organizationId: recorded.organizationId,
      caseId: recorded.caseId,
      target: { type: 'object', id: key },
    };
    await withAuditScope(scope, () =>
      recordAuditNow(
        intact
          ? {
              ...event,
              action: 'evidence.object.downloaded',
              metadata: { sha256: actual.sha256, sizeBytes: actual.sizeBytes },
            }
          : {
              ...event,
              action: 'evidence.object.integrity_failed',
              metadata: {
                expectedSha256: recorded.sha256,
                actualSha256: actual.sha256,
                expectedSizeBytes: recorded.sizeBytes,
                actualSizeBytes: actual.sizeBytes,
              },
            },
      ),
    );
  }
  return intact ? 'verified' : 'integrity-failed';
}
