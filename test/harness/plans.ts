import { eq } from 'drizzle-orm';
import { db } from '../../lib/db/client';
import { organizationPlans } from '../../lib/db/schema';

/** Sets the storage an organization's plan holds, in bytes (written straight into its plan row). */
export const setPlanStorage = (organizationId: string, storageBytes: number) =>
  db().update(organizationPlans).set({ storageBytes }).where(eq(organizationPlans.organizationId, organizationId));
