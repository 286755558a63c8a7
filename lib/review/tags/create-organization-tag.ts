import type * as z from 'zod/mini';
import type { CreateOrganizationTagDto } from '../../../schemas/review/tags';
import type { OrganizationContext } from '../../organizations/context';
import { insertTag, toReviewTag } from './tag-writes';

/** POST /organization/{orgId}/tags: an organization tag, usable by the firm in every case (never by opposing counsel). */
export async function createOrganizationTag(
  ctx: { organization: OrganizationContext; userId: string },
  input: z.output<typeof CreateOrganizationTagDto>,
) {
  const row = await insertTag(
    { organizationId: ctx.organization.id, caseId: null, type: 'organization', side: 'org', createdById: ctx.userId },
    input,
  );
  return toReviewTag(row);
}
