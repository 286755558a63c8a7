import { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import httpCors from '@middy/http-cors';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { and, eq } from 'drizzle-orm';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { jwtVerify } from 'jose';
import * as z from 'zod/mini';

/**
 * The floor of the cold-start ratio (test/bench/README.md, "Cold start"): the smallest route of
 * *this* stack. Only the libraries every one of our routes loads at init, used the way lib/ uses
 * them: middy with the middlewares of lib/http/endpoint.ts (header normalizer, CORS, JSON body
 * parser), the Powertools logger, zod/mini (one object schema), jose, drizzle's query builder with
 * one table, and postgres.js + drizzle's driver imported on the first query (as lib/db/client.ts
 * does). No route table, no schema or domain code of ours. Never deployed: `npm run size` bundles
 * it like a function and compares its import with the typical route's in the same run.
 */

// Loaded at init, created on the first line written (as lib/log.ts does).
let logger: Logger | undefined;

const notes = pgTable('notes', {
  id: uuid('id').primaryKey(),
  userId: uuid('user_id').notNull(),
  title: text('title').notNull(),
  body: text('body').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
});

let database: Promise<PostgresJsDatabase> | undefined;
function db(): Promise<PostgresJsDatabase> {
  database ??= Promise.all([import('postgres'), import('drizzle-orm/postgres-js')]).then(
    ([{ default: postgres }, { drizzle }]) =>
      drizzle(postgres(process.env.DATABASE_URL ?? 'postgres://localhost/floor', { max: 1 })),
  );
  return database;
}
const secret = new TextEncoder().encode(process.env.JWT_SECRET ?? 'floor-route-secret');

const UpdateNote = z.object({
  id: z.string().check(z.uuid()),
  title: z.string().check(z.minLength(1), z.maxLength(200)),
  body: z.string().check(z.maxLength(10_000)),
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
  const [note] = await (await db())
    .update(notes)
    .set({ title: input.data.title, body: input.data.body })
    .where(and(eq(notes.id, input.data.id), eq(notes.userId, userId)))
    .returning();
  if (!note) return { statusCode: 404, body: JSON.stringify({ error: 'not found' }) };
  logger ??= new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'floor' });
  logger.info('note updated');
  return { statusCode: 200, body: JSON.stringify(note) };
}

export const handler = middy<Event, APIGatewayProxyStructuredResultV2>()
  .use(httpHeaderNormalizer())
  .use(httpCors())
  .use(httpJsonBodyParser({ disableContentTypeError: true }))
  .handler(updateNote);
