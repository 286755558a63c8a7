import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { and, eq } from 'drizzle-orm';
import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import { jwtVerify } from 'jose';
import postgres from 'postgres';
import { z } from 'zod';

/**
 * The yardstick of `npm run size` (issue 19): a typical route of this stack written the usual way
 * and bundled exactly like our functions. middy with the JSON body parser, classic `zod` (one
 * object schema), jose verifying a bearer token, drizzle over postgres.js (one query). Like a real
 * function it creates its client at module load and connects on the first query; it is never
 * deployed and never invoked by the size check, which only loads it.
 */

const notes = pgTable('notes', {
  id: uuid('id').primaryKey(),
  userId: uuid('user_id').notNull(),
  title: text('title').notNull(),
  body: text('body').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
});

const db = drizzle(postgres(process.env.DATABASE_URL ?? 'postgres://localhost/typical', { max: 1 }));
const secret = new TextEncoder().encode(process.env.JWT_SECRET ?? 'typical-route-secret');

const UpdateNote = z.object({
  id: z.string().uuid(),
  title: z.string().min(1).max(200),
  body: z.string().max(10_000),
});

type Event = Omit<APIGatewayProxyEventV2, 'body'> & { body: unknown };

async function updateNote(event: Event): Promise<APIGatewayProxyStructuredResultV2> {
  const token = event.headers.authorization?.replace(/^Bearer /, '') ?? '';
  let userId: string;
  try {
    const { payload } = await jwtVerify(token, secret, { algorithms: ['HS256'] });
    userId = String(payload.sub);
  } catch {
    return { statusCode: 401, body: JSON.stringify({ error: 'unauthorized' }) };
  }
  const input = UpdateNote.safeParse(event.body);
  if (!input.success) return { statusCode: 400, body: JSON.stringify({ error: input.error.issues }) };
  const [note] = await db
    .update(notes)
    .set({ title: input.data.title, body: input.data.body })
    .where(and(eq(notes.id, input.data.id), eq(notes.userId, userId)))
    .returning();
  if (!note) return { statusCode: 404, body: JSON.stringify({ error: 'not found' }) };
  return { statusCode: 200, body: JSON.stringify(note) };
}

export const handler = middy<Event, APIGatewayProxyStructuredResultV2>()
  .use(httpJsonBodyParser({ disableContentTypeError: true }))
  .handler(updateNote);
