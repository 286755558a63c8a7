import * as z from 'zod/mini';
import { DisplayName, Id, IdText, QueryBoolean } from '../common/fields';
import { PageEntity, PagingQuery } from '../common/paging';
import { TagEntity } from '../material/material';

/** The tag types a list may be narrowed to. */
export const TAG_TYPES = ['system', 'organization', 'case', 'user'] as const;

/** A colour as `#RRGGBB` (stored uppercase). */
const Colour = z.pipe(
  z.string().check(z.regex(/^#[0-9A-Fa-f]{6}$/, 'Expected a colour as #RRGGBB')),
  z.transform((value: string) => value.toUpperCase()),
);

const Severity = z.enum(['info', 'warning', 'danger']);

/** The contract's Tag and the case it belongs to (null for organization and system tags). */
export const ReviewTagEntity = z
  .extend(TagEntity, { caseId: z.nullable(Id) })
  .register(z.globalRegistry, { id: 'ReviewTagEntity' });

export const ReviewTagPageEntity = PageEntity(ReviewTagEntity).register(z.globalRegistry, {
  id: 'ReviewTagPageEntity',
});

export const CaseTagsPath = z.object({ caseId: IdText });
export const CaseTagPath = z.object({ caseId: IdText, tagId: IdText });
export const OrganizationTagsPath = z.object({ orgId: IdText });
export const OrganizationTagPath = z.object({ orgId: IdText, tagId: IdText });

/** GET /cases/{caseId}/tags: common paging (by name, sortOrder asc by default), a type, inactive tags too. */
export const ListCaseTagsQuery = z.object({
  ...PagingQuery,
  type: z.optional(z.enum(TAG_TYPES)),
  includeInactive: z.optional(QueryBoolean),
});

/** GET /organization/{orgId}/tags: common paging (by name), inactive tags too. */
export const ListOrganizationTagsQuery = z.object({ ...PagingQuery, includeInactive: z.optional(QueryBoolean) });

const TagLook = {
  backgroundColor: z.optional(Colour),
  textColor: z.optional(Colour),
  severity: z.optional(Severity),
};

/** POST /cases/{caseId}/tags: a case tag (everyone on the caller's side sees it) or the caller's own user tag. */
export const CreateCaseTagDto = z
  .object({ name: DisplayName, type: z.optional(z.enum(['case', 'user'])), ...TagLook })
  .register(z.globalRegistry, { id: 'CreateCaseTagDto' });

/** POST /organization/{orgId}/tags: an organization tag, usable in every case of the firm. */
export const CreateOrganizationTagDto = z
  .object({ name: DisplayName, ...TagLook })
  .register(z.globalRegistry, { id: 'CreateOrganizationTagDto' });

/** PATCH of a tag: its name, colours and severity (its type and scope never change). */
export const UpdateTagDto = z
  .object({ name: z.optional(DisplayName), ...TagLook })
  .register(z.globalRegistry, { id: 'UpdateTagDto' });
