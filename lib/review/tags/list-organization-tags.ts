import type * as z from 'zod/mini';
import type { ListOrganizationTagsQuery } from '../../../schemas/review/tags';
import type { OrganizationContext } from '../../organizations/context';
import { organizationTagsOf } from './organization-tag-access';
import { tagPage } from './tag-page';

/** GET /organization/{orgId}/tags: the organization's tags by name, active ones unless `includeInactive`. Two queries. */
export async function listOrganizationTags(
  ctx: { organization: OrganizationContext },
  query: z.output<typeof ListOrganizationTagsQuery>,
) {
  return tagPage(organizationTagsOf(ctx.organization.id), query);
}
