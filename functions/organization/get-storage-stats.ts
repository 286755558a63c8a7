import { endpoint } from '../../lib/http/endpoint';
import { getStorageStats } from '../../lib/organizations';
import { OrganizationIdPath, StorageStatsEntity, StorageStatsQuery } from '../../schemas/organization/organization';
import * as routes from '../routes';

/** GET /organization/{orgId}/storage-stats: live cases only, largest first; only cases the caller may open are named. */
export const handler = endpoint(
  routes.getStorageStats,
  { path: OrganizationIdPath, query: StorageStatsQuery, response: StorageStatsEntity },
  ({ organization, actor, query }) => getStorageStats({ organization, userId: actor.user.id }, query),
);
