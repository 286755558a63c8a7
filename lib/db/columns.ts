import { timestamp, uuid } from 'drizzle-orm/pg-core';
import { now } from '../clock';
import { newId } from '../ids';

/** Shared columns, spread into every table so ids and timestamps look the same everywhere. */
export const id = {
  id: uuid('id').primaryKey().$defaultFn(newId),
};

export const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const timestamps = {
  createdAt: timestamptz('created_at').notNull().$defaultFn(now),
  updatedAt: timestamptz('updated_at').notNull().$defaultFn(now).$onUpdateFn(now),
};
