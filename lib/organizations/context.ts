import type { OrganizationRole } from './roles';

/** The organization a request acts in, with the caller's role in it and whether its plan is active. */
export interface OrganizationContext {
  id: string;
  role: OrganizationRole;
  planActive: boolean;
}
