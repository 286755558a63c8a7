import type * as z from 'zod/mini';
import type { UpdateTagDto } from '../../../schemas/review/tags';
import type { OrganizationContext } from '../../organizations/context';
import { assertOrganizationTagChangeable, organizationAddressable } from './organization-tag-access';
import { changeTag, toReviewTag } from './tag-writes';

/** PATCH /organization/{orgId}/tags/{tagId}: an organization tag's name, colours or severity. */
export async function updateOrganizationTag(
  ctx: { organization: OrganizationContext },
  tagId: string,
  input: z.output<typeof UpdateTagDto>,
) {
  const row = await changeTag(
    tagId,
    organizationAddressable(ctx.organization.id),
    assertOrganizationTagChangeable,
    input,
  );
  return toReviewTag(row);
}
