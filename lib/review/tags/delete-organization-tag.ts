import type { OrganizationContext } from '../../organizations/context';
import { assertOrganizationTagChangeable, organizationAddressable } from './organization-tag-access';
import { deactivateTag, toReviewTag } from './tag-writes';

/** DELETE /organization/{orgId}/tags/{tagId}: deactivates an organization tag, keeping its links and history. */
export async function deleteOrganizationTag(ctx: { organization: OrganizationContext }, tagId: string) {
  const row = await deactivateTag(tagId, organizationAddressable(ctx.organization.id), assertOrganizationTagChangeable);
  return toReviewTag(row);
}
