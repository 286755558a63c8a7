import type { Hash } from 'node:crypto';
import { Transform } from 'node:stream';

/**
 * A pass-through that feeds every chunk to `hash` and counts the bytes, so a body is hashed as it
 * is stored or copied, never read twice. With `limit`, the chunk that takes the count past
 * `limit.bytes` fails the stream with `limit.error` (a body larger than its link allows).
 */
export function digestingStream(
  hash: Hash,
  limit?: { bytes: number; error: Error },
): { stream: Transform; sizeBytes: () => number } {
  let sizeBytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      sizeBytes += chunk.length;
      done(limit && sizeBytes > limit.bytes ? limit.error : null, chunk);
    },
  });
  return { stream, sizeBytes: () => sizeBytes };
}
