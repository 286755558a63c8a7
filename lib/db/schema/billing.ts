import { pgTable, text } from 'drizzle-orm/pg-core';
import { timestamps } from '../columns';

/** Customers of the offline sandbox payment processor (the local default when Stripe is not configured). */
export const sandboxCustomers = pgTable('sandbox_customers', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  email: text('email').notNull(),
  organizationId: text('organization_id').notNull(),
  ...timestamps,
});
