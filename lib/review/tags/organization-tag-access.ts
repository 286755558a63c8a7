import { and, eq, or, type SQL, sql } from 'drizzle-orm';
import { tags } from '../../db/schema/review';
import { SystemTagReadOnlyError } from './errors';
import type { TagRow } from './tag-writes';

/** The organization's own tags: type organization, of the firm's side (imports' tags have no side and are the firm's). */
export const organizationTagsOf = (organizationId: string): SQL =>
  and(
    eq(tags.organizationId, organizationId),
    eq(tags.type, 'organization'),
    sql`coalesce(${tags.creatorAccessType}, 'org') = 'org'`,
  )!;

/**
 * The tags an organization route may address: its organization tags and its system tags (seen by
 * every member, so refused with 403 rather than hidden). Case and user tags are not organization
 * tags: 404 here.
 */
export const organizationAddressable = (organizationId: string): SQL =>
  or(organizationTagsOf(organizationId), and(eq(tags.organizationId, organizationId), eq(tags.type, 'system')))!;

/** System tags are read-only through the API. */
export function assertOrganizationTagChangeable(row: TagRow): void {
  if (row.type === 'system') throw new SystemTagReadOnlyError();
}
