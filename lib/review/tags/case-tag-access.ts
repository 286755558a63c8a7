import type { CaseContext } from '../../cases/context';
import { tagViewerOf, visibleTag } from '../tag-visibility';
import { OrganizationTagElsewhereError, SystemTagReadOnlyError } from './errors';
import type { TagRow } from './tag-writes';

/** The tags a case route may address: those the caller sees in the case (any other is 404). */
export const caseTagsOf = (caseContext: CaseContext, userId: string) => visibleTag(tagViewerOf(caseContext, userId));

/**
 * What a case route may change: the case's tags and the caller's own user tags. System tags are
 * read-only and organization tags are managed at /organization/{orgId}/tags: 403, since the
 * caller sees them anyway.
 */
export function assertCaseTagChangeable(row: TagRow): void {
  if (row.type === 'system') throw new SystemTagReadOnlyError();
  if (row.type === 'organization') throw new OrganizationTagElsewhereError();
}
