import type { IncomingMessage } from 'node:http';

/** The request body if it is at most `limit` bytes; null (the rest unread) when it is larger. */
export async function readAtMost(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of req) {
    length += (chunk as Buffer).length;
    if (length > limit) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
